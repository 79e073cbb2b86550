import type { FuncCall, FunctionRef, SelectTarget, SqlExpr } from '../parse/index.js';
import { INT4, INT8, TEXT, type Expr, type WindowCall } from '../plan/expr.js';
import type { OutputColumn, Plan, SetFunctionName } from '../plan/nodes.js';
import type { QType } from '../types/contract.js';
import { mapExpr, someExpr } from '../plan/expr-util.js';
import { coerce, unify } from './coerce.js';
import { invalid, mismatch } from './context.js';
import { elementType, isArrayType } from '../types/index.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { renamedColumns, type Scope } from './scope.js';

/** The set-returning functions svcdb has (in FROM, or alone in a select list). */
export function isSetReturningCall(node: SqlExpr | null | undefined): node is FuncCall {
  return node?.kind === 'func' && node.name.schema === null && SELECT_LIST_SRFS.has(node.name.name) && node.over === null;
}

const SELECT_LIST_SRFS = new Set(['generate_series', 'unnest']);

/**
 * A function in FROM: `generate_series(1, 3) [WITH ORDINALITY] [AS] g(n [, ord])`. A function
 * returning one column is named by its alias (PostgreSQL's rule), else by the function's name.
 * The arguments may use parameters and enclosing queries' columns, not this FROM clause's
 * (LATERAL needs a join that re-runs the function per row, which the executor does not have).
 */
export function bindFunctionItem(item: FunctionRef, scope: Scope, env: ExprEnv): Plan {
  if (item.calls.length !== 1) throw invalid('ROWS FROM (...) with several functions is not supported', { reason: 'unsupported' });
  const call = item.calls[0]!;
  const fnName = call.kind === 'func' ? call.name.name : 'function';
  const plain = call.kind === 'func' && call.name.schema === null && call.over === null;
  const unnest = plain && call.name.name === 'unnest';
  const jsonb = plain && JSONB_SET_FUNCTIONS.has(call.name.name);
  if (!isSetReturningCall(call) && !unnest && !jsonb) throw invalid(`function ${fnName}() in FROM is not supported`, { reason: 'unsupported' });
  if (item.columnDefs) throw invalid('a column definition list is only allowed for functions returning "record"');
  const alias = item.alias?.name ?? fnName;
  let plan = unnest ? bindUnnest(call, env, alias) : jsonb ? bindJsonbSet(call, env, alias) : bindSeries(call, env, alias);
  if (item.withOrdinality) plan = withOrdinality(plan);
  scope.add(alias, renamedColumns(plan.columns, item.alias?.columns ?? null));
  return plan;
}

const JSONB: QType = { name: 'jsonb' };
const JSONB_SET_FUNCTIONS = new Set(['jsonb_array_elements', 'jsonb_array_elements_text', 'jsonb_each', 'jsonb_each_text', 'jsonb_object_keys']);

/**
 * jsonb_array_elements[_text] (a column `value`), jsonb_each[_text] (`key`, `value`) and
 * jsonb_object_keys (one column named by the alias, as PostgreSQL names a function without OUT parameters).
 */
function bindJsonbSet(node: FuncCall, env: ExprEnv, alias: string): Plan {
  const fn = node.name.name as Exclude<SetFunctionName, 'generate_series' | 'unnest'>;
  const bound = plainArgs(node, fn).map((a) => bindExpr(a, env));
  if (bound.length !== 1 || !['jsonb', 'unknown'].includes(bound[0]!.type.name)) {
    const shown = bound.map((e) => (e.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(e.type).toLowerCase())).join(', ');
    throw mismatch(`function ${fn}(${shown}) does not exist`, { function: fn });
  }
  const arg = coerce(env.ctx, bound[0]!, JSONB, 'implicit');
  const value = fn.endsWith('_text') ? TEXT : JSONB;
  const columns: OutputColumn[] =
    fn === 'jsonb_object_keys'
      ? [{ name: alias, type: TEXT, nullable: false }]
      : fn === 'jsonb_each' || fn === 'jsonb_each_text'
        ? [
            { name: 'key', type: TEXT, nullable: false },
            { name: 'value', type: value, nullable: true },
          ]
        : [{ name: 'value', type: value, nullable: true }];
  return { kind: 'function_scan', fn, args: [arg], columns };
}

/** WITH ORDINALITY: a bigint column numbering the function's rows from 1 (row_number over them, in their order). */
function withOrdinality(plan: Plan): Plan {
  const call: WindowCall = {
    fn: 'row_number',
    agg: null,
    args: [],
    partitionBy: [],
    orderBy: [],
    frame: { mode: 'range', start: { kind: 'unbounded_preceding' }, end: { kind: 'current' } },
  };
  const columns: OutputColumn[] = [...plan.columns, { name: 'ordinality', type: INT8, nullable: false }];
  return { kind: 'window', input: plan, calls: [call], columns };
}

/** unnest(array) of one array (several arrays, zipped, are refused): a column of its element type. */
function bindUnnest(node: FuncCall, env: ExprEnv, name: string): Plan {
  const bound = plainArgs(node, 'unnest').map((a) => bindExpr(a, env));
  if (bound.length > 1) throw invalid('unnest with several arrays is not supported', { reason: 'unsupported' });
  const type = bound[0]?.type;
  if (!type || !isArrayType(type)) {
    const shown = bound.map((e) => (e.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(e.type).toLowerCase())).join(', ');
    throw mismatch(`function unnest(${shown}) does not exist`, { function: 'unnest' });
  }
  return { kind: 'function_scan', fn: 'unnest', args: bound, columns: [{ name, type: elementType(type), nullable: true }] };
}

function plainArgs(node: FuncCall, fn: string): readonly SqlExpr[] {
  if (node.star || node.distinct || node.orderBy.length > 0 || node.filter !== null || node.argNames !== null || node.variadic) {
    throw invalid(`${fn} takes plain arguments`, { reason: 'unsupported' });
  }
  return node.args;
}

/**
 * generate_series(start, stop[, step]) over integers as a plan of one column named `name`.
 * `env` is over the FROM scope: a column of this query's row is a reference to a FROM item.
 */
export function bindSeries(node: FuncCall, env: ExprEnv, name: string): Plan {
  const bound = plainArgs(node, 'generate_series').map((a) => bindExpr(a, env));
  const shown = (): string => bound.map((e) => env.ctx.types.typeText(e.type).toLowerCase()).join(', ');
  if (bound.length < 2 || bound.length > 3) throw mismatch(`function generate_series(${shown()}) does not exist`);
  const { type } = unify(env.ctx, bound, 'generate_series');
  const target = type.name === 'int8' ? INT8 : type.name === 'int4' || type.name === 'int2' || type.name === 'unknown' ? INT4 : null;
  if (!target) throw mismatch(`generate_series(${shown()}) is not supported: svcdb's generate_series takes integers`, { reason: 'unsupported' });
  const exprs: Expr[] = bound.map((e) => coerce(env.ctx, e, target, 'implicit'));
  return { kind: 'function_scan', fn: 'generate_series', args: exprs, columns: [{ name, type: target, nullable: false }] };
}

/** The scope entry holding a select list's set-returning function's values (a name no query can write unquoted). */
const SRF_ENTRY = 'generate_series()';

/**
 * A select list calling generate_series (PostgreSQL's ProjectSet): with one such call, each input
 * row is repeated once per value, the same as crossing the input with the series. The call is
 * replaced by a reference to the crossed column. Several calls (PostgreSQL zips them) and calls
 * whose arguments read the row (LATERAL) are refused.
 */
export function bindSelectListSeries(
  targets: readonly SelectTarget[],
  scope: Scope,
  env: ExprEnv,
  input: Plan,
): { plan: Plan; targets: SelectTarget[] } | null {
  const calls: FuncCall[] = [];
  const replaced = targets.map((t) => ({ ...t, expr: replaceCalls(t.expr, calls) as SqlExpr }));
  if (calls.length === 0) return null;
  if (calls.length > 1) throw invalid('more than one set-returning function in a select list is not supported', { reason: 'unsupported' });
  const call = calls[0]!;
  const bound = call.name.name === 'unnest' ? bindUnnest(call, env, 'unnest') : bindSeries(call, env, 'generate_series');
  const { series, lateral } = rowReading(bound);
  scope.add(
    SRF_ENTRY,
    series.columns.map((c) => ({ ...c, hidden: true })),
  );
  const plan: Plan = {
    kind: 'join',
    joinType: 'cross',
    left: input,
    right: series,
    on: null,
    hash: null,
    columns: [...input.columns, ...series.columns],
    ...(lateral ? { lateral: 0 } : {}),
  };
  return { plan, targets: replaced };
}

/**
 * A select-list function whose arguments read the input row runs once per row (a LATERAL join):
 * its column references become references to the nearest outer row, and outer references move
 * one level up. Such arguments holding a subquery are refused (its plan would need the same shift).
 */
function rowReading(series: Plan): { series: Plan; lateral: boolean } {
  if (series.kind !== 'function_scan') return { series, lateral: false };
  const reads = series.args.some((a) => someExpr(a, (e) => e.kind === 'column' || e.kind === 'outer'));
  if (!reads) return { series, lateral: false };
  if (series.args.some((a) => someExpr(a, (e) => e.kind === 'subquery'))) {
    throw invalid(`${series.fn} arguments that read the row and hold a subquery are not supported`, { reason: 'unsupported' });
  }
  const shift = (e: Expr): Expr | undefined =>
    e.kind === 'column'
      ? { kind: 'outer', type: e.type, depth: 1, index: e.index, name: e.name }
      : e.kind === 'outer'
        ? { ...e, depth: e.depth + 1 }
        : undefined;
  return { series: { ...series, args: series.args.map((a) => mapExpr(a, shift)) }, lateral: true };
}

/** A copy of `node` with each set-returning call (outside subqueries) replaced by a reference to the crossed column. */
function replaceCalls(node: unknown, calls: FuncCall[]): unknown {
  if (Array.isArray(node)) return node.map((n) => replaceCalls(n, calls));
  if (node === null || typeof node !== 'object') return node;
  const n = node as SqlExpr;
  if (isSetReturningCall(n)) {
    calls.push(n);
    return { kind: 'column_ref', qualifier: [SRF_ENTRY], column: n.name.name, loc: n.loc };
  }
  if (n.kind === 'sublink') return node;
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, replaceCalls(v, calls)]));
}
