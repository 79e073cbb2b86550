import type { QType } from '../types/contract.js';
import type { AggCall, Expr, SortKey, WindowCall } from './expr.js';

/** Rebuilds an expression bottom-up: `fn` may replace any node (return undefined to recurse). */
export function mapExpr(expr: Expr, fn: (e: Expr) => Expr | undefined): Expr {
  const replaced = fn(expr);
  if (replaced !== undefined) return replaced;
  const m = (e: Expr): Expr => mapExpr(e, fn);
  switch (expr.kind) {
    case 'const':
    case 'param':
    case 'column':
    case 'outer':
      return expr;
    case 'subquery': {
      const tuple = expr.tuple?.map((t) => ({ ...t, left: m(t.left) }));
      const test = expr.test ? { ...expr.test, left: m(expr.test.left) } : null;
      return tuple ? { ...expr, test, tuple } : { ...expr, test };
    }
    case 'call':
      return { ...expr, args: expr.args.map(m) };
    case 'cast':
      return { ...expr, arg: m(expr.arg) };
    case 'and':
    case 'or':
      return { ...expr, args: expr.args.map(m) };
    case 'not':
      return { ...expr, arg: m(expr.arg) };
    case 'is_null':
    case 'is_bool':
      return { ...expr, arg: m(expr.arg) };
    case 'case':
      return { ...expr, whens: expr.whens.map((w) => ({ cond: m(w.cond), result: m(w.result) })), otherwise: m(expr.otherwise) };
    case 'coalesce':
    case 'minmax':
      return { ...expr, args: expr.args.map(m) };
    case 'in_list':
      return { ...expr, arg: m(expr.arg), list: expr.list.map(m) };
    case 'distinct_from':
      return { ...expr, left: m(expr.left), right: m(expr.right) };
    case 'array':
      return { ...expr, elements: expr.elements.map(m) };
    case 'quantified':
      return { ...expr, arg: m(expr.arg), array: m(expr.array) };
    case 'agg':
      return { ...expr, call: mapAgg(expr.call, m) };
    case 'window':
      return { ...expr, call: mapWindow(expr.call, m) };
  }
}

function mapSortKeys(keys: readonly SortKey[], m: (e: Expr) => Expr): SortKey[] {
  return keys.map((k) => ({ ...k, expr: m(k.expr) }));
}

function mapAgg(call: AggCall, m: (e: Expr) => Expr): AggCall {
  return { ...call, args: call.args.map(m), filter: call.filter ? m(call.filter) : null, orderBy: mapSortKeys(call.orderBy, m) };
}

function mapWindow(call: WindowCall, m: (e: Expr) => Expr): WindowCall {
  return {
    ...call,
    args: call.args.map(m),
    agg: call.agg ? mapAgg(call.agg, m) : null,
    partitionBy: call.partitionBy.map(m),
    orderBy: mapSortKeys(call.orderBy, m),
  };
}

/** Visits every node (not descending into subquery plans). */
export function walkExpr(expr: Expr, visit: (e: Expr) => void): void {
  mapExpr(expr, (e) => {
    visit(e);
    return undefined;
  });
}

export function someExpr(expr: Expr, test: (e: Expr) => boolean): boolean {
  let found = false;
  walkExpr(expr, (e) => {
    if (!found && test(e)) found = true;
  });
  return found;
}

/** Date and time types whose literals may mean the moment they are read ('now', 'today', 'tomorrow'). */
const MOMENT_TYPES: ReadonlySet<string> = new Set(['timestamp', 'timestamptz', 'date', 'interval']);

/**
 * True when the expression holds a date/time constant (or an array of them): such a literal was
 * folded when it was bound, so `'now'` in it means the moment of that binding. A bound expression
 * reused across statements (a cached INSERT, a table's DEFAULT or CHECK) must be bound again per
 * statement when this holds, or `'now'` would stay the first statement's time.
 */
export function holdsMomentConstant(expr: Expr): boolean {
  return someExpr(expr, (e) => e.kind === 'const' && MOMENT_TYPES.has(e.type.name === 'array' ? (e.type.element?.name ?? '') : e.type.name));
}

function typeKey(t: QType): string {
  return t.name === 'array'
    ? `${typeKey(t.element ?? { name: 'unknown' })}[]`
    : `${t.name}(${t.length ?? ''},${t.precision ?? ''},${t.scale ?? ''},${t.dimension ?? ''})`;
}

function valueKey(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Float32Array) return `f32[${[...v].join(',')}]`;
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
}

/** A structural key: equal keys mean the same computation (GROUP BY / ORDER BY matching). */
export function exprKey(expr: Expr): string {
  switch (expr.kind) {
    case 'const':
      return `c:${typeKey(expr.type)}:${valueKey(expr.value)}`;
    case 'param':
      return `p${expr.index}:${typeKey(expr.type)}`;
    case 'column':
      return `#${expr.index}`;
    case 'outer':
      return `o${expr.depth}.${expr.index}`;
    case 'call':
      return `${expr.fn.name}/${expr.fn.argTypes.map(typeKey).join(',')}(${expr.args.map(exprKey).join(',')})`;
    case 'cast':
      return `cast(${exprKey(expr.arg)} as ${typeKey(expr.type)})`;
    case 'and':
    case 'or':
    case 'coalesce':
      return `${expr.kind}(${expr.args.map(exprKey).join(',')})`;
    case 'minmax':
      return `${expr.greatest ? 'greatest' : 'least'}(${expr.args.map(exprKey).join(',')})`;
    case 'not':
      return `not(${exprKey(expr.arg)})`;
    case 'is_null':
      return `isnull${expr.negated ? '!' : ''}(${exprKey(expr.arg)})`;
    case 'is_bool':
      return `is${expr.negated ? '!' : ''}${String(expr.value)}(${exprKey(expr.arg)})`;
    case 'case':
      return `case(${expr.whens.map((w) => `${exprKey(w.cond)}=>${exprKey(w.result)}`).join(';')};else ${exprKey(expr.otherwise)})`;
    case 'in_list':
      return `in${expr.negated ? '!' : ''}(${exprKey(expr.arg)};${expr.list.map(exprKey).join(',')})`;
    case 'distinct_from':
      return `df${expr.negated ? '!' : ''}(${exprKey(expr.left)},${exprKey(expr.right)})`;
    case 'array':
      return `array(${expr.elements.map(exprKey).join(',')})`;
    case 'quantified':
      return `q${expr.all ? 'all' : 'any'}${expr.op.name}(${exprKey(expr.arg)},${exprKey(expr.array)})`;
    case 'subquery':
      return `sub${expr.id}`;
    case 'agg':
      return `agg:${aggKey(expr.call)}`;
    case 'window':
      return `win:${expr.call.fn}:${expr.call.agg ? aggKey(expr.call.agg) : ''}(${expr.call.args.map(exprKey).join(',')}) over(${expr.call.partitionBy.map(exprKey).join(',')};${sortKey(expr.call.orderBy)};${JSON.stringify(expr.call.frame)})`;
  }
}

function sortKey(keys: readonly SortKey[]): string {
  return keys.map((k) => `${exprKey(k.expr)}${k.descending ? 'd' : 'a'}${k.nullsFirst ? 'f' : 'l'}`).join(',');
}

export function aggKey(call: AggCall): string {
  return `${call.name}${call.distinct ? ' distinct' : ''}${call.star ? '*' : ''}(${call.args.map(exprKey).join(',')})${call.filter ? ` filter ${exprKey(call.filter)}` : ''}${call.orderBy.length ? ` order ${sortKey(call.orderBy)}` : ''}`;
}

/** True when the expression reads no column of its own row and nothing volatile: a constant per execution. */
export function isStable(expr: Expr): boolean {
  return !someExpr(
    expr,
    (e) => e.kind === 'column' || e.kind === 'subquery' || e.kind === 'agg' || e.kind === 'window' || (e.kind === 'call' && !e.fn.immutable),
  );
}

/** Column indexes an expression reads. */
export function columnsOf(expr: Expr): Set<number> {
  const out = new Set<number>();
  walkExpr(expr, (e) => {
    if (e.kind === 'column') out.add(e.index);
  });
  return out;
}

/** Shifts column indexes by `delta` (moving an expression to a narrower or wider row). */
export function shiftColumns(expr: Expr, delta: number): Expr {
  if (delta === 0) return expr;
  return mapExpr(expr, (e) => (e.kind === 'column' ? { ...e, index: e.index + delta } : undefined));
}

/** Splits AND chains into conjuncts. */
export function conjuncts(expr: Expr | null): Expr[] {
  if (!expr) return [];
  if (expr.kind === 'and') return expr.args.flatMap(conjuncts);
  return [expr];
}

export function andAll(exprs: readonly Expr[]): Expr | null {
  if (exprs.length === 0) return null;
  if (exprs.length === 1) return exprs[0]!;
  return { kind: 'and', type: { name: 'bool' }, args: exprs };
}

export function hasSubquery(expr: Expr): boolean {
  return someExpr(expr, (e) => e.kind === 'subquery');
}

export function hasCorrelatedSubquery(expr: Expr): boolean {
  return someExpr(expr, (e) => e.kind === 'subquery' && e.correlated);
}
