import { frameOf } from './window-frame.js';
import type { QType } from '../types/contract.js';
import { BOOL, constant, FLOAT8, INT4, INT8, UNKNOWN, type AggCall, type Expr, type SortKey, type WindowCall, type WindowFnName } from '../plan/expr.js';
import { DISTINCT_FN, WINDOW_FN, type AstNode } from '../parse/index.js';
import { asCondition, callByName, coerce, unify } from './coerce.js';
import { someExpr } from '../plan/expr-util.js';
import { invalid, mismatch } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { functionName, identName } from './names.js';

const WINDOW_ONLY = new Set<string>(['row_number', 'rank', 'dense_rank', 'lag', 'lead', 'first_value', 'last_value', 'ntile', 'percent_rank', 'cume_dist']);

/** Function calls: special forms, aggregates, window functions, then the TypeSystem's scalar functions. */
export function bindFunction(node: AstNode, env: ExprEnv): Expr {
  const wrapped = unwrapWindowCall(node);
  if (wrapped) return bindFunction(wrapped, env);
  const name = node.type === 'aggr_func' || node.type === 'window_func' ? String(node.name).toLowerCase() : functionName(node).name;
  const over = node.over ?? null;
  if (WINDOW_ONLY.has(name)) return bindWindowFunction(name as WindowFnName, node, env);
  const special = bindSpecialForm(name, node, env);
  if (special) return special;
  const agg = aggregateCall(name, node, env);
  if (agg) {
    if (over) return windowOf('aggregate', agg.type, [], agg.call, over, env);
    if (agg.call.args.some((a) => someExpr(a, (e) => e.kind === 'agg'))) throw invalid('aggregate function calls cannot be nested');
    if (!env.allowAggregates) throw invalid(`aggregate functions are not allowed in ${env.clause}`, { function: name });
    return agg;
  }
  if (over) throw invalid(`function ${name} is not a window function`);
  const args = plainArgs(node).map((a) => bindExpr(a, env));
  return callByName(env.ctx, name, args, false);
}

function plainArgs(node: AstNode): AstNode[] {
  if (node.type === 'aggr_func') return node.args?.expr ? [node.args.expr] : [];
  return node.args?.value ?? (node.args?.expr ? [node.args.expr] : []);
}

function argEnv(env: ExprEnv, clause: string): ExprEnv {
  return { ...env, allowAggregates: false, allowWindows: false, clause };
}

function aggregateCall(name: string, node: AstNode, env: ExprEnv): { kind: 'agg'; type: QType; call: AggCall } | null {
  const star = node.args?.expr?.type === 'star';
  let distinct = String(node.args?.distinct ?? '').toUpperCase() === 'DISTINCT';
  const inner = argEnv(env, 'aggregate function calls');
  let argNodes = star ? [] : plainArgs(node);
  const first = argNodes[0];
  if (first?.type === 'function' && functionName(first).name === DISTINCT_FN) {
    distinct = true;
    argNodes = [first.args?.value?.[0], ...argNodes.slice(1)];
  }
  if (node.args?.separator?.delimiter) argNodes = [...argNodes, node.args.separator.delimiter];
  // Bound where the call itself is: round(avg(x), 2) is a scalar call over an aggregate.
  const args = argNodes.map((a) => bindExpr(a, env));
  const resolved = env.ctx.types.resolveAggregate(
    name,
    args.map((a) => a.type),
    { distinct, star },
  );
  if (!resolved) {
    if (node.type === 'aggr_func') {
      const shown = args.map((a) => env.ctx.types.typeText(a.type).toLowerCase()).join(', ');
      throw mismatch(`function ${name}(${star ? '*' : shown}) does not exist`, { function: name });
    }
    return null;
  }
  if (args.some((a) => someExpr(a, (e) => e.kind === 'window'))) throw invalid('aggregate function calls cannot contain window function calls');
  const coerced = args.map((a, i) => coerce(env.ctx, a, resolved.argTypes[i] ?? a.type, 'implicit'));
  const filterNode = node.filter?.where ?? null;
  const filter = filterNode ? asCondition(env.ctx, bindExpr(filterNode, inner), 'FILTER') : null;
  const orderBy = bindSortKeys(node.args?.orderby ?? [], inner);
  const call: AggCall = { name, agg: resolved, args: coerced, distinct, star, filter, orderBy, argTypes: coerced.map((a) => a.type) };
  return { kind: 'agg', type: resolved.returnType, call };
}

/** ORDER BY items inside an aggregate or a window. */
export function bindSortKeys(items: readonly AstNode[], env: ExprEnv): SortKey[] {
  return items.map((item) => {
    const descending = String(item.type ?? '').toUpperCase() === 'DESC';
    const nulls = String(item.nulls ?? '').toUpperCase();
    const nullsFirst = nulls === 'NULLS FIRST' ? true : nulls === 'NULLS LAST' ? false : descending;
    return { expr: bindExpr(item.expr, env), descending, nullsFirst };
  });
}

function bindWindowFunction(name: WindowFnName, node: AstNode, env: ExprEnv): Expr {
  if (!node.over) throw invalid(`window function ${name} requires an OVER clause`);
  const args = plainArgs(node).map((a) => bindExpr(a, { ...env, allowWindows: false, clause: 'window function calls' }));
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
  } else if (name === 'ntile') {
    type = INT4;
    bound = [coerce(env.ctx, args[0] ?? constant(INT4, 1), INT4, 'implicit')];
  } else if (name === 'percent_rank' || name === 'cume_dist') type = FLOAT8;
  return windowOf(name, type, bound, null, node.over, env);
}

function windowOf(fn: WindowFnName, type: QType, args: readonly Expr[], agg: AggCall | null, over: AstNode, env: ExprEnv): Expr {
  if (!env.allowWindows) throw invalid(`window functions are not allowed in ${env.clause}`);
  const spec = windowSpec(over, env);
  const inner = { ...env, allowWindows: false, clause: 'window definitions' };
  const partitionBy = (spec.partitionby ?? []).map((p: AstNode) => bindExpr(p.expr ?? p, inner));
  const orderBy = bindSortKeys(spec.orderby ?? [], inner);
  const call: WindowCall = { fn, agg, args, partitionBy, orderBy, frame: frameOf(spec.window_frame_clause) };
  return { kind: 'window', type, call };
}

function windowSpec(over: AstNode, env: ExprEnv): AstNode {
  const spec = over.as_window_specification;
  if (typeof spec === 'string' || (spec && !spec.window_specification)) {
    const name = identName(spec);
    const named = env.scope.namedWindows.get(name);
    if (!named) throw invalid(`window "${name}" does not exist`);
    return named;
  }
  return spec?.window_specification ?? {};
}

/** COALESCE, NULLIF, GREATEST, LEAST, POSITION(a IN b), TRIM(... FROM ...), CURRENT_*. */
function bindSpecialForm(name: string, node: AstNode, env: ExprEnv): Expr | null {
  const raw: AstNode[] = node.args?.value ?? [];
  switch (name) {
    case 'coalesce': {
      const unified = unify(
        env.ctx,
        raw.map((a) => bindExpr(a, env)),
        'COALESCE',
      );
      return { kind: 'coalesce', type: unified.type, args: unified.exprs };
    }
    case 'nullif': {
      if (raw.length !== 2) throw mismatch('function nullif requires two arguments');
      const a = bindExpr(raw[0]!, env);
      const b = bindExpr(raw[1]!, env);
      const cond = callByName(env.ctx, '=', [a, b], true);
      const type = a.type.name === 'unknown' ? { name: 'text' as const } : a.type;
      return { kind: 'case', type, whens: [{ cond, result: constant(type, null) }], otherwise: coerce(env.ctx, a, type, 'implicit') };
    }
    case 'greatest':
    case 'least': {
      const unified = unify(
        env.ctx,
        raw.map((a) => bindExpr(a, env)),
        name.toUpperCase(),
      );
      return { kind: 'minmax', type: unified.type, args: unified.exprs, greatest: name === 'greatest', compare: env.ctx.types.comparator(unified.type) };
    }
    case 'position': {
      const parts = raw.filter((a) => !(a.type === 'origin' && String(a.value).toLowerCase() === 'in'));
      if (parts.length !== 2) return null;
      return callByName(env.ctx, 'strpos', [bindExpr(parts[1]!, env), bindExpr(parts[0]!, env)], false);
    }
    case 'trim':
      return bindTrim(raw, env);
    case 'current_timestamp':
    case 'current_date':
    case 'localtimestamp':
    case 'current_time':
      if (node.args && raw.length > 0) return null;
      return callByName(env.ctx, name === 'current_timestamp' ? 'now' : name, [], false);
    default:
      return null;
  }
}

function bindTrim(raw: AstNode[], env: ExprEnv): Expr {
  let mode = 'btrim';
  const rest: AstNode[] = [];
  let sawFrom = false;
  for (const a of raw) {
    const word = a.type === 'origin' ? String(a.value).toLowerCase() : null;
    if (word === 'both') mode = 'btrim';
    else if (word === 'leading') mode = 'ltrim';
    else if (word === 'trailing') mode = 'rtrim';
    else if (word === 'from') sawFrom = true;
    else rest.push(a);
  }
  const args = rest.map((a) => bindExpr(a, env));
  // TRIM(chars FROM s) -> btrim(s, chars); TRIM(s) -> btrim(s)
  const ordered = sawFrom && args.length === 2 ? [args[1]!, args[0]!] : args;
  return callByName(env.ctx, mode, ordered, false);
}

export const BOOLEAN_TYPE = BOOL;

/** sum(__svc_win('f', args...)) OVER w (from the pre-processor) -> f(args...) OVER w. */
function unwrapWindowCall(node: AstNode): AstNode | null {
  if (node.type !== 'aggr_func' || !node.over) return null;
  const inner = node.args?.expr as AstNode | undefined;
  if (inner?.type !== 'function' || functionName(inner).name !== WINDOW_FN) return null;
  const [nameNode, ...args] = (inner.args?.value ?? []) as AstNode[];
  const name = String(nameNode?.value ?? '');
  return { type: 'function', name: { name: [{ type: 'default', value: name }] }, args: { type: 'expr_list', value: args }, over: node.over };
}
