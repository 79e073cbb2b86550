import type { FuncCall, SelectTarget, SqlExpr } from '../parse/index.js';
import { TEXT, type Expr } from '../plan/expr.js';
import type { FunctionScanNode, Plan } from '../plan/nodes.js';
import { mapExpr, someExpr } from '../plan/expr-util.js';
import { isAggregateName } from '../functions/index.js';
import { invalid } from './context.js';
import type { ExprEnv } from './expr.js';
import { outputName } from './names.js';
import type { Scope } from './scope.js';
import { bindSetCall, isSetReturningCall, rowsFrom } from './table-function.js';

/** The scope entry holding a select list's set-returning functions' values (a name no query can write unquoted). */
const SRF_ENTRY = 'generate_series()';

/**
 * A select list calling set-returning functions (PostgreSQL's ProjectSet). With one call, each
 * input row is repeated once per value, the same as crossing the input with the function; with
 * several, PostgreSQL 10+ runs them in lockstep, padding the shorter with NULLs until the longest
 * ends, which is crossing the input with their rows_from. A row for which every call gives no
 * rows gives no output. Each call is replaced by a reference to its crossed column (hidden, named
 * `#1`, `#2`, …, in a scope entry after the FROM items'); a target holding a call keeps the name
 * it had. The caller crosses (crossSelectListSeries) below grouping when a call is a grouping key
 * and above grouping and window functions otherwise, as PostgreSQL places its ProjectSet.
 * jsonb_each[_text] as a whole select-list item gives its record's text, `(key,value)`.
 */
export function selectListSeries(
  targets: readonly SelectTarget[],
  scope: Scope,
  env: ExprEnv,
): { functions: FunctionScanNode[]; targets: SelectTarget[] } | null {
  const calls: FuncCall[] = [];
  const whole: boolean[] = [];
  const replaced = targets.map((t) => {
    const count = calls.length;
    const expr = replaceCalls(t.expr, calls, null) as SqlExpr;
    // The call is the whole item, or the whole item is its text (`jsonb_each(doc)::text`).
    const item = t.expr.kind === 'cast' && t.expr.type.name === 'text' && t.expr.type.arrayBounds === 0 ? t.expr.arg : t.expr;
    for (let i = count; i < calls.length; i++) whole.push(calls[i] === item);
    return calls.length === count ? t : { ...t, expr, alias: t.alias ?? outputName(t.expr) };
  });
  if (calls.length === 0) return null;
  const functions = calls.map((call, i) => {
    const fn = bindSetCall(call, env);
    if (fn.columns.length === 1) return fn;
    // jsonb_each gives a record (key, value): as a whole item, its text; svcdb has no record values to compute with.
    if (!whole[i])
      throw invalid(`${fn.fn} in a select list (a record) is not supported other than as a whole item: call it in FROM`, { reason: 'unsupported' });
    return { ...fn, record: true, columns: [{ name: call.name.name, type: TEXT, nullable: false }] };
  });
  const columns = functions.map((f) => ({ ...f.columns[0]!, nullable: functions.length > 1 || f.columns[0]!.nullable }));
  scope.add(
    SRF_ENTRY,
    columns.map((c, i) => ({ ...c, name: `#${i + 1}`, hidden: true })),
  );
  return { functions, targets: replaced };
}

/** Where select-list functions' columns wait while grouping and windows are bound (past any row's width). */
export const SERIES_SLOT = 1_000_000;

/**
 * Where a select list's set-returning functions run, as PostgreSQL places its ProjectSet:
 * 'before' grouping when each is a grouping key (`GROUP BY 2`: its values are the groups), or
 * when nothing is grouped or windowed; 'after' the Aggregate and WindowAgg otherwise (once per
 * group: `SELECT n, generate_series(1, n) … GROUP BY n`). Some as keys and others not is refused.
 */
export function placeSeries(
  functions: readonly FunctionScanNode[],
  first: number,
  keys: readonly Expr[],
  grouped: boolean,
  windowed: boolean,
): 'before' | 'after' {
  const isKey = functions.map((_f, j) => keys.some((k) => someExpr(k, (e) => e.kind === 'column' && e.index === first + j)));
  if (isKey.some((k) => k)) {
    if (!isKey.every((k) => k)) throw invalid('set-returning functions both in GROUP BY and outside it are not supported', { reason: 'unsupported' });
    if (functions.some((f) => f.args.some((a) => someExpr(a, (e) => e.kind === 'agg')))) throw invalid('aggregate functions are not allowed in GROUP BY');
    return 'before';
  }
  if (functions.some((f) => f.args.some((a) => someExpr(a, (e) => e.kind === 'window')))) {
    throw invalid('window functions in the arguments of a set-returning function are not supported', { reason: 'unsupported' });
  }
  return grouped || windowed ? 'after' : 'before';
}

/** Columns [from, from + count) of `e` moved to [to, to + count). */
export function moveColumns(e: Expr, from: number, count: number, to: number): Expr {
  return mapExpr(e, (n) => (n.kind === 'column' && n.index >= from && n.index < from + count ? { ...n, index: n.index - from + to } : undefined));
}

/** The input crossed with the select list's functions (arguments reading the input's row run per row). */
export function crossSelectListSeries(input: Plan, functions: readonly FunctionScanNode[]): Plan {
  const shifted = rowReading(functions);
  const right = shifted.functions.length === 1 ? shifted.functions[0]! : rowsFrom(shifted.functions);
  return {
    kind: 'join',
    joinType: 'cross',
    left: input,
    right,
    on: null,
    hash: null,
    columns: [...input.columns, ...right.columns],
    ...(shifted.lateral ? { lateral: 0 } : {}),
  };
}

/**
 * Select-list functions whose arguments read the input row run once per row (a LATERAL join):
 * their column references become references to the nearest outer row, and outer references move
 * one level up. Such arguments holding a subquery are refused (its plan would need the same shift).
 */
function rowReading(functions: readonly FunctionScanNode[]): { functions: readonly FunctionScanNode[]; lateral: boolean } {
  const reads = functions.some((f) => f.args.some((a) => someExpr(a, (e) => e.kind === 'column' || e.kind === 'outer')));
  if (!reads) return { functions, lateral: false };
  for (const f of functions) {
    if (f.args.some((a) => someExpr(a, (e) => e.kind === 'subquery'))) {
      throw invalid(`${f.fn} arguments that read the row and hold a subquery are not supported`, { reason: 'unsupported' });
    }
  }
  const shift = (e: Expr): Expr | undefined =>
    e.kind === 'column'
      ? { kind: 'outer', type: e.type, depth: 1, index: e.index, name: e.name }
      : e.kind === 'outer'
        ? { ...e, depth: e.depth + 1 }
        : undefined;
  return { functions: functions.map((f) => ({ ...f, args: f.args.map((a) => mapExpr(a, shift)) })), lateral: true };
}

/**
 * A copy of `node` with each set-returning call (outside subqueries) replaced by a reference to
 * its crossed column. `within` names the CASE, COALESCE, aggregate or window call the walk is
 * inside: PostgreSQL refuses a set-returning call there (in CASE it would run whether or not the
 * branch is taken; an aggregate runs over rows, not sets).
 */
function replaceCalls(node: unknown, calls: FuncCall[], within: string | null): unknown {
  if (Array.isArray(node)) {
    const out = node.map((n) => replaceCalls(n, calls, within));
    return out.some((n, i) => n !== node[i]) ? out : node;
  }
  if (node === null || typeof node !== 'object') return node;
  const n = node as SqlExpr;
  if (isSetReturningCall(n)) {
    if (within === 'aggregate function calls' || within === 'window function calls') throw invalid(`${within} cannot contain set-returning function calls`);
    // PostgreSQL allows it (in PARTITION BY / ORDER BY of an OVER clause); svcdb's crossing runs below the window.
    if (within === 'window definitions') throw invalid('set-returning functions in window definitions are not supported', { reason: 'unsupported' });
    if (within) {
      throw invalid(`set-returning functions are not allowed in ${within}`, {
        hint: 'You might be able to move the set-returning function into a LATERAL FROM item.',
      });
    }
    // PostgreSQL runs a call nested in another's arguments in a ProjectSet of its own, below.
    if (n.args.some((a) => replaceCalls(a, [], null) !== a)) {
      throw invalid('set-returning functions nested in the arguments of another are not supported', { reason: 'unsupported' });
    }
    calls.push(n);
    return { kind: 'column_ref', qualifier: [SRF_ENTRY], column: `#${calls.length}`, loc: n.loc };
  }
  if (n.kind === 'sublink') return node;
  const f = node as SqlExpr; // not narrowed by the type guard above: other calls are walked too
  const inside =
    n.kind === 'case'
      ? 'CASE'
      : n.kind === 'coalesce'
        ? 'COALESCE'
        : f.kind === 'func' && f.over !== null
          ? 'window function calls'
          : f.kind === 'func' && isAggregateName(f.name.name)
            ? 'aggregate function calls'
            : within;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) {
    const r = replaceCalls(v, calls, k === 'over' ? 'window definitions' : inside);
    if (r !== v) changed = true;
    out[k] = r;
  }
  return changed ? out : node;
}
