import type { QType } from '../types/contract.js';
import { constant, FLOAT8, INT4, INT8, UNKNOWN, type AggCall, type Expr, type SortKey, type WindowCall, type WindowFnName } from '../plan/expr.js';
import { someExpr } from '../plan/expr-util.js';
import { isAggregateName } from '../functions/index.js';
import { isArrayType } from '../types/index.js';
import type { FuncCall, SortItem, SqlExpr, WindowSpec } from '../parse/ast/index.js';
import { asCondition, callByName, coerce, unify } from './coerce.js';
import { invalid, mismatch } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { frameOf, hasRangeOffset, resolveWindow } from './window-frame.js';
import { withWholeRow } from './whole-row.js';
import { groupingCall } from './grouping-sets.js';
import { ORDERED_SET_AGGREGATES, orderedSetCall, positionalMakeInterval } from './call-forms.js';

/** ORDER BY key types a RANGE offset frame measures exactly (integers and numeric; float and datetime keys are refused). */
const RANGE_KEY_TYPES = new Set(['int2', 'int4', 'int8', 'numeric']);

const WINDOW_ONLY = new Set<string>([
  'row_number',
  'rank',
  'dense_rank',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  'ntile',
  'percent_rank',
  'cume_dist',
]);

/** Function calls: aggregates, window functions, then the TypeSystem's scalar functions. */
export function bindFunction(call: FuncCall, env: ExprEnv): Expr {
  let node = withWholeRow(call, env.scope);
  const { schema } = node.name;
  const name = node.name.name;
  if (schema === null && name === 'make_interval' && node.argNames?.some((n) => n !== null)) node = positionalMakeInterval(node, env);
  if (schema === null && ORDERED_SET_AGGREGATES.has(name)) node = orderedSetCall(node);
  if (schema !== null && schema !== 'pg_catalog') throw mismatch(`function ${schema}.${name} does not exist`, { function: name });
  if (schema === 'pg_catalog' && name === 'grouping') {
    return groupingCall(
      node.args.map((a) => bindExpr(a, env)),
      env.clause,
      env.allowAggregates,
    );
  }
  if (node.argNames !== null && node.argNames.some((n) => n !== null)) throw unsupported(`named arguments (${name})`);
  if (node.variadic) throw unsupported(`VARIADIC arguments (${name})`);
  if (node.withinGroup.length > 0) throw unsupported(`WITHIN GROUP (${name})`);
  if (schema === null && SET_FUNCTIONS.has(name) && node.over === null) throw setReturningMisplaced(name, env.clause);
  if (WINDOW_ONLY.has(name)) return bindWindowFunction(name as WindowFnName, node, env);
  const agg = aggregateCall(name, node, env);
  if (agg) {
    if (node.over) return windowOf('aggregate', agg.type, [], agg.call, node.over, env);
    if (agg.call.args.some((a) => someExpr(a, (e) => e.kind === 'agg'))) throw invalid('aggregate function calls cannot be nested');
    if (!env.allowAggregates) throw invalid(`aggregate functions are not allowed in ${env.clause}`, { function: name });
    return agg;
  }
  if (node.over) throw invalid(`function ${name} is not a window function`);
  if (node.distinct) throw invalid(`DISTINCT specified, but ${name} is not an aggregate function`);
  if (node.orderBy.length > 0) throw invalid(`ORDER BY specified, but ${name} is not an aggregate function`);
  if (node.filter) throw invalid(`FILTER specified, but ${name} is not an aggregate function`);
  if (node.star) throw mismatch(`function ${name}(*) does not exist`, { function: name });
  const args = node.args.map((a) => bindExpr(a, env));
  if (name === 'extract' || name === 'date_part') return bindExtract(name, args, env);
  return callByName(env.ctx, name, args, false);
}

/** The set-returning functions svcdb has: table-function.ts binds them where PostgreSQL allows them. */
const SET_FUNCTIONS = new Set(
  ['generate_series', 'unnest', 'regexp_matches', 'regexp_split_to_table'].concat(
    ...['array_elements', 'array_elements_text', 'each', 'each_text', 'object_keys'].map((f) => [`jsonb_${f}`, `json_${f}`]),
  ),
);

/** A set-returning call reached as a scalar: PostgreSQL's error for its clause, or "not supported" where PostgreSQL allows it. */
function setReturningMisplaced(name: string, clause: string): Error {
  if (clause === 'aggregate function calls' || clause === 'window function calls') return invalid(`${clause} cannot contain set-returning function calls`);
  if (clause === 'functions in FROM') return invalid('set-returning functions must appear at top level of FROM');
  if (NOT_ALLOWED.has(clause)) return invalid(`set-returning functions are not allowed in ${clause}`);
  return unsupported(`${name} in ${clause}`);
}

const NOT_ALLOWED = new Set(['WHERE', 'HAVING', 'JOIN conditions', 'LIMIT', 'OFFSET', 'window definitions', 'window frame offsets', 'VALUES']);

function unsupported(what: string): Error {
  return invalid(`${what} is not supported`, { reason: 'unsupported' });
}

/** extract(field, source) / date_part: the field is case-insensitive; extract falls back to date_part's signature. */
function bindExtract(name: string, args: Expr[], env: ExprEnv): Expr {
  const [field, source] = args;
  if (args.length !== 2 || field!.kind !== 'const' || typeof field!.value !== 'string') return callByName(env.ctx, name, args, false);
  const lowered = [constant(field!.type, field!.value.toLowerCase()), source!];
  if (
    name === 'extract' &&
    !env.ctx.types.resolveFunction('extract', [UNKNOWN, source!.type]) &&
    env.ctx.types.resolveFunction('date_part', [UNKNOWN, source!.type])
  ) {
    return callByName(env.ctx, 'date_part', lowered, false);
  }
  return callByName(env.ctx, name, lowered, false);
}

function argEnv(env: ExprEnv, clause: string): ExprEnv {
  return { ...env, allowAggregates: false, allowWindows: false, clause };
}

function aggregateCall(name: string, node: FuncCall, env: ExprEnv): { kind: 'agg'; type: QType; call: AggCall } | null {
  const { star, distinct } = node;
  const known = isAggregateName(name);
  if (!known && !star) return null;
  // Bound where the call itself is: round(avg(x), 2) is a scalar call over an aggregate.
  const args = star ? [] : node.args.map((a) => bindExpr(a, env));
  const resolved = env.ctx.types.resolveAggregate(
    name,
    args.map((a) => a.type),
    { distinct, star },
  );
  if (!resolved) {
    if (!known) return null;
    // An ordered-set call is bound as (ordered value, direct arguments): PostgreSQL names the
    // direct arguments first, and supports an array of fractions, which svcdb does not.
    const ordered = ORDERED_SET_AGGREGATES.has(name) && args.length > 1;
    if (ordered && args.slice(1).some((a) => isArrayType(a.type))) throw unsupported(`${name} with an array of fractions`);
    const shown = (ordered ? [...args.slice(1), args[0]!] : args)
      .map((a) => (a.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(a.type).toLowerCase()))
      .join(', ');
    throw mismatch(`function ${name}(${star ? '*' : shown}) does not exist`, { function: name });
  }
  if (args.some((a) => someExpr(a, (e) => e.kind === 'window'))) throw invalid('aggregate function calls cannot contain window function calls');
  const coerced = args.map((a, i) => coerce(env.ctx, a, resolved.argTypes[i] ?? a.type, 'implicit'));
  const inner = argEnv(env, 'aggregate function calls');
  const filter = node.filter ? asCondition(env.ctx, bindExpr(node.filter, inner), 'FILTER') : null;
  const orderBy = bindSortKeys(node.orderBy, inner);
  const call: AggCall = { name, agg: resolved, args: coerced, distinct, star, filter, orderBy, argTypes: coerced.map((a) => a.type) };
  return { kind: 'agg', type: resolved.returnType, call };
}

/** ORDER BY items inside an aggregate or a window (and wherever a list of sort items is bound as expressions). */
export function bindSortKeys(items: readonly SortItem[], env: ExprEnv): SortKey[] {
  return items.map((item) => {
    const descending = sortDescending(item);
    const nullsFirst = item.nulls === null ? descending : item.nulls === 'first';
    return { expr: bindExpr(item.expr, env), descending, nullsFirst };
  });
}

/** DESC, or ORDER BY x USING > (USING < is ASC); other USING operators are refused. */
export function sortDescending(item: SortItem): boolean {
  if (item.using === null) return item.direction === 'desc';
  if (item.using === '<' || item.using === '~<~') return false;
  if (item.using === '>' || item.using === '~>~') return true;
  throw unsupported(`ORDER BY ... USING ${item.using}`);
}

function bindWindowFunction(name: WindowFnName, node: FuncCall, env: ExprEnv): Expr {
  if (!node.over) throw invalid(`window function ${name} requires an OVER clause`);
  if (node.distinct || node.orderBy.length > 0 || node.star) throw invalid(`window function ${name} cannot have DISTINCT, ORDER BY or * arguments`);
  if (node.filter) throw invalid(`FILTER is not implemented for non-aggregate window functions`);
  const args = node.args.map((a) => bindExpr(a, { ...env, allowWindows: false, clause: 'window function calls' }));
  let type: QType = INT8;
  let bound = args;
  if (name === 'lag' || name === 'lead') {
    if (args.length === 0) throw mismatch(`function ${name}() does not exist`);
    const offset = args[1] ? coerce(env.ctx, args[1], INT4, 'implicit') : constant(INT4, 1);
    const value = args[0]!;
    const fallback = args[2] ?? constant(UNKNOWN, null);
    const unified = unify(env.ctx, [value, fallback], name);
    type = unified.type;
    bound = [unified.exprs[0]!, offset, unified.exprs[1]!];
  } else if (name === 'first_value' || name === 'last_value') {
    type = args[0]?.type.name === 'unknown' ? { name: 'text' } : (args[0]?.type ?? UNKNOWN);
  } else if (name === 'nth_value') {
    if (args.length !== 2) throw mismatch(`function nth_value(${args.length} arguments) does not exist`);
    type = args[0]!.type.name === 'unknown' ? { name: 'text' } : args[0]!.type;
    bound = [args[0]!, coerce(env.ctx, args[1]!, INT4, 'implicit')];
  } else if (name === 'ntile') {
    type = INT4;
    bound = [coerce(env.ctx, args[0] ?? constant(INT4, 1), INT4, 'implicit')];
  } else if (name === 'percent_rank' || name === 'cume_dist') type = FLOAT8;
  return windowOf(name, type, bound, null, node.over, env);
}

function windowOf(fn: WindowFnName, type: QType, args: readonly Expr[], agg: AggCall | null, over: WindowSpec, env: ExprEnv): Expr {
  if (!env.allowWindows) throw invalid(`window functions are not allowed in ${env.clause}`);
  const spec = resolveWindow(over, env.scope.namedWindows);
  const inner = { ...env, allowWindows: false, clause: 'window definitions' };
  const partitionBy = spec.partitionBy.map((p) => bindExpr(p, inner));
  const orderBy = bindSortKeys(spec.orderBy, inner);
  const frame = frameOf(spec.frame, (offset) => frameOffset(offset, argEnv(env, 'window frame offsets')));
  if (frame.mode === 'groups' && orderBy.length === 0) throw invalid('GROUPS mode requires an ORDER BY clause');
  if (hasRangeOffset(frame)) {
    if (orderBy.length !== 1) throw invalid('RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column');
    const key = orderBy[0]!.expr.type.name;
    if (!RANGE_KEY_TYPES.has(key)) throw unsupported(`RANGE with offset PRECEDING/FOLLOWING over ${key} keys`);
  }
  const call: WindowCall = { fn, agg, args, partitionBy, orderBy, frame };
  return { kind: 'window', type, call };
}

/** A frame offset (`2 PRECEDING`, `1 + 1 FOLLOWING`): a constant integer, folded at bind time. */
function frameOffset(node: SqlExpr, env: ExprEnv): number {
  const bound = bindExpr(node, env);
  if (bound.kind !== 'const' || bound.value === null) throw unsupported('window frame offsets other than integer constants');
  const value = coerce(env.ctx, bound, INT8, 'implicit');
  if (value.kind !== 'const') throw unsupported('window frame offsets other than integer constants');
  return Number(value.value);
}
