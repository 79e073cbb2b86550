import type { QType } from '../types/contract.js';
import { BOOL, constant, INT4, INT8, NUMERIC, UNKNOWN, type Expr } from '../plan/expr.js';
import type { Plan } from '../plan/nodes.js';
import { EXTRACT_FN, literalValue, NUM_FN, OP_FN, type AstNode } from '../parse/index.js';
import { asCondition, callByName, coerce, unify } from './coerce.js';
import { invalid, mismatch, type BindContext } from './context.js';
import { functionName, identName } from './names.js';
import { Scope } from './scope.js';
import { bindTypeName } from './type-names.js';
import { bindRowComparison, bindRowDistinct, bindRowIn, bindRowIsNull, rowItems, type RowEnv } from './row-compare.js';

/** What an expression is bound in. */
export interface ExprEnv {
  readonly ctx: BindContext;
  readonly scope: Scope;
  /** Clause name for messages ("WHERE", "JOIN conditions", ...); aggregates/windows allowed only where set. */
  readonly clause: string;
  readonly allowAggregates: boolean;
  readonly allowWindows: boolean;
  /** Binds a subquery in a child scope of `scope` (injected: select.ts imports this file). */
  readonly bindSubquery: (ast: AstNode, scope: Scope) => { plan: Plan; types: readonly QType[] };
  /** Binds a function call: aggregates, windows and scalar functions (injected from functions.ts). */
  readonly bindFunction: (node: AstNode, env: ExprEnv) => Expr;
}

const COMPARISON: Record<string, string> = { '=': '=', '<>': '<>', '!=': '<>', '<': '<', '>': '>', '<=': '<=', '>=': '>=' };
const LIKE: Record<string, string> = { LIKE: '~~', 'NOT LIKE': '!~~', ILIKE: '~~*', 'NOT ILIKE': '!~~*' };
const SIMPLE_OPERATORS = new Set([
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  '->',
  '->>',
  '#>',
  '#>>',
  '@>',
  '<@',
  '?',
  '?|',
  '?&',
  '&&',
  '~',
  '~*',
  '!~',
  '!~*',
  '#-',
  '<->',
  '<=>',
  '<#>',
  '^',
]);

/** Binds one expression. */
export function bindExpr(node: AstNode, env: ExprEnv): Expr {
  if (node === null || node === undefined) return constant(UNKNOWN, null);
  if (node.ast) return bindScalarSubquery(node.ast, env);
  switch (node.type) {
    case 'column_ref':
      return bindColumnRef(node, env);
    case 'number':
      return exactNumber(env, String(node.value));
    case 'bigint':
      return exactNumber(env, String(node.value));
    case 'single_quote_string':
    case 'string':
    case 'natural_string':
    case 'regex_string':
      return constant(UNKNOWN, stringValue(node));
    case 'double_quote_string':
      return bindColumnRef({ type: 'column_ref', table: null, column: { expr: node } }, env);
    case 'bool':
      return constant(BOOL, Boolean(node.value));
    case 'null':
      return constant(UNKNOWN, null);
    case 'var':
      return bindParam(node, env);
    case 'param':
      return bindParam({ name: node.value, prefix: '$' }, env);
    case 'binary_expr':
      return bindBinary(node, env);
    case 'unary_expr':
      return bindUnary(node, env);
    case 'function':
      return bindFunctionNode(node, env);
    case 'aggr_func':
    case 'window_func':
      return env.bindFunction(node, env);
    case 'case':
      return bindCase(node, env);
    case 'cast':
      return bindCast(node, env);
    case 'interval':
      return typedLiteral(env, { name: 'interval' }, `${stringValue(node.expr)}${node.unit ? ` ${node.unit}` : ''}`);
    case 'date':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return typedLiteral(env, env.ctx.types.parseTypeName(node.type), stringValue(node));
    case 'array':
      return bindArray(node, env);
    case 'expr_list': {
      const values: AstNode[] = node.value ?? [];
      if (values.length === 1) return bindExpr(values[0]!, env);
      throw invalid('row constructors are not supported here');
    }
    case 'default':
      throw invalid('DEFAULT is not allowed in this context');
    default:
      throw invalid(`unsupported expression: ${String(node.type)}`, { expression: node.type });
  }
}

function bindColumnRef(node: AstNode, env: ExprEnv): Expr {
  if (node.column === '*') throw invalid('"*" is not allowed in this context');
  const column = identName(node.column);
  const table = node.table === null || node.table === undefined ? null : identName(node.table);
  const found = env.scope.resolve(table, column);
  const { type } = found.column;
  const override = table === null && found.depth === 0 ? env.scope.usingOverrides.get(found.index) : undefined;
  if (override) return override;
  if (found.depth === 0) return { kind: 'column', type, index: found.index, name: column };
  return { kind: 'outer', type, depth: found.depth, index: found.index, name: column };
}

/** A numeric constant's text (sign included) typed as PostgreSQL types it: int4, else int8, else numeric. */
function exactNumber(env: ExprEnv, text: string): Expr {
  if (/^-?[0-9]+$/.test(text)) {
    const n = BigInt(text);
    if (n >= -2147483648n && n <= 2147483647n) return constant(INT4, Number(n));
    if (n >= -9223372036854775808n && n <= 9223372036854775807n) return constant(INT8, n);
  }
  return constant(NUMERIC, env.ctx.types.parseText(NUMERIC, text));
}

/**
 * The text of a numeric constant, or null: PostgreSQL's grammar folds a minus into a numeric
 * constant, through parentheses, before typing it, so -9223372036854775808 is an int8 and
 * -(-2147483648) the int8 2147483648 (doNegate in gram.y).
 */
function numericConstantText(node: AstNode): string | null {
  if (node === null || node === undefined) return null;
  if (node.type === 'number' && !node.ast) return String(node.value);
  if (node.type === 'bigint') return String(node.value);
  if (node.type === 'function' && functionName(node).name === NUM_FN) return String(node.args?.value?.[0]?.value);
  if (node.type === 'unary_expr' && node.operator === '-') {
    const inner = numericConstantText(node.expr);
    return inner === null ? null : inner.startsWith('-') ? inner.slice(1) : `-${inner}`;
  }
  return null;
}

function typedLiteral(env: ExprEnv, type: QType, text: string): Expr {
  return constant(type, env.ctx.types.parseText(type, text));
}

function bindParam(node: AstNode, env: ExprEnv): Expr {
  const n = Number(node.name);
  if (!Number.isInteger(n) || n < 1) throw invalid(`invalid parameter reference $${String(node.name)}`);
  const index = n - 1;
  return { kind: 'param', index, type: env.ctx.paramType(index) ?? UNKNOWN };
}

function bindBinary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === 'AND' || op === 'OR') {
    const args = [bindExpr(node.left, env), bindExpr(node.right, env)].map((a) => asCondition(env.ctx, a, op));
    const kind = op === 'AND' ? 'and' : 'or';
    const flat = args.flatMap((a) => (a.kind === kind ? a.args : [a]));
    return { kind, type: BOOL, args: flat };
  }
  if (op === 'IN' || op === 'NOT IN') return bindIn(node, env, op === 'NOT IN');
  if (op === 'BETWEEN' || op === 'NOT BETWEEN') return bindBetween(node, env, op === 'NOT BETWEEN');
  if (op === 'IS' || op === 'IS NOT') return bindIs(node, env, op === 'IS NOT');
  const right = node.right as AstNode;
  const quantifiable = COMPARISON[op] ?? LIKE[op];
  if (quantifiable !== undefined && right?.type === 'function') {
    const quantifier = functionName(right).name;
    if (quantifier === 'any' || quantifier === 'some' || quantifier === 'all') return bindQuantified(node, env, quantifiable, quantifier === 'all');
  }
  if (COMPARISON[op] !== undefined && (rowItems(node.left) || rowItems(right))) return bindRowComparison(COMPARISON[op]!, node.left, right, rowEnv(env));
  const left = bindExpr(node.left, env);
  const rightExpr = bindExpr(right, env);
  if (COMPARISON[op] !== undefined) return callByName(env.ctx, COMPARISON[op]!, [left, rightExpr], true);
  if (LIKE[op] !== undefined) return callByName(env.ctx, LIKE[op]!, [left, likeEscape(right, rightExpr, env)], true);
  const lower = op.toLowerCase();
  if (SIMPLE_OPERATORS.has(lower)) return callByName(env.ctx, lower, [left, rightExpr], true);
  throw invalid(`operator not supported: ${op}`, { operator: op });
}

function bindUnary(node: AstNode, env: ExprEnv): Expr {
  const op = String(node.operator).toUpperCase();
  if (op === 'NOT') return negate(asCondition(env.ctx, bindExpr(node.expr, env), 'NOT'));
  if (op === 'NOT EXISTS') return negate(bindExists(node.expr, env));
  if (op === 'EXISTS') return bindExists(node.expr, env);
  if (op === '-') {
    const folded = numericConstantText(node);
    if (folded !== null) return exactNumber(env, folded);
  }
  const arg = bindExpr(node.expr, env);
  if (op === '+') return arg;
  if (op === '-') return callByName(env.ctx, '-', [arg], true);
  throw invalid(`operator not supported: ${op}`, { operator: op });
}

export function negate(expr: Expr): Expr {
  if (expr.kind === 'const') return constant(BOOL, expr.value === null ? null : !expr.value);
  return { kind: 'not', type: BOOL, arg: expr };
}

function bindIs(node: AstNode, env: ExprEnv, negated: boolean): Expr {
  const right = node.right as AstNode;
  if (right.type === 'null' && rowItems(node.left)) return bindRowIsNull(node.left, negated, rowEnv(env));
  const arg = bindExpr(node.left, env);
  if (right.type === 'null') return { kind: 'is_null', type: BOOL, arg, negated };
  if (right.type === 'bool') return { kind: 'is_bool', type: BOOL, arg: asCondition(env.ctx, arg, 'IS'), value: Boolean(right.value), negated };
  if (right.type === 'column_ref' && identName(right.column) === 'unknown') {
    return { kind: 'is_bool', type: BOOL, arg: asCondition(env.ctx, arg, 'IS'), value: null, negated };
  }
  throw invalid('unsupported IS expression');
}

function bindBetween(node: AstNode, env: ExprEnv, negated: boolean): Expr {
  const bounds: AstNode[] = node.right?.value ?? [];
  if (bounds.length !== 2) throw invalid('BETWEEN needs two bounds');
  const arg = bindExpr(node.left, env);
  const low = bindExpr(bounds[0]!, env);
  const high = bindExpr(bounds[1]!, env);
  if (negated) {
    return { kind: 'or', type: BOOL, args: [callByName(env.ctx, '<', [arg, low], true), callByName(env.ctx, '>', [arg, high], true)] };
  }
  return { kind: 'and', type: BOOL, args: [callByName(env.ctx, '>=', [arg, low], true), callByName(env.ctx, '<=', [arg, high], true)] };
}

function bindIn(node: AstNode, env: ExprEnv, negated: boolean): Expr {
  const items: AstNode[] = node.right?.type === 'expr_list' ? (node.right.value ?? []) : [node.right];
  if (items.length === 1 && items[0]!.ast) {
    const lefts: AstNode[] = node.left?.type === 'expr_list' ? (node.left.value ?? []) : [];
    const sub = lefts.length > 1 ? bindTupleIn(items[0]!.ast, lefts, env) : bindSubqueryExpr(items[0]!.ast, env, 'in', { left: node.left, op: '=' });
    return negated ? negate(sub) : sub;
  }
  if (rowItems(node.left)) return bindRowIn(node.left, items, negated, rowEnv(env));
  const arg = bindExpr(node.left, env);
  const list = items.map((item) => bindExpr(item, env));
  const unified = unify(env.ctx, [arg, ...list], 'IN');
  const [left, ...rest] = unified.exprs;
  const eq = rest.map((item) => {
    const call = callByName(env.ctx, '=', [left!, item], true);
    if (call.kind !== 'call') return env.ctx.types.resolveFunction('=', [unified.type, unified.type])!;
    return call.fn;
  });
  return { kind: 'in_list', type: BOOL, arg: left!, list: rest, eq, negated };
}

function bindQuantified(node: AstNode, env: ExprEnv, op: string, all: boolean): Expr {
  const args: AstNode[] = node.right.args?.value ?? [];
  const inner = args[0];
  if (!inner) throw invalid('ANY/ALL needs an argument');
  if (inner.ast) return bindSubqueryExpr(inner.ast, env, all ? 'all' : 'any', { left: node.left, op });
  const arg = bindExpr(node.left, env);
  let array = bindExpr(inner, env);
  if (array.type.name === 'unknown')
    array = coerce(env.ctx, array, { name: 'array', element: arg.type.name === 'unknown' ? { name: 'text' } : arg.type }, 'implicit');
  if (array.type.name !== 'array' || !array.type.element) throw mismatch('op ANY/ALL (array) requires array on right side');
  const element = array.type.element;
  const fn = env.ctx.types.resolveFunction(op, [arg.type, element]);
  if (!fn) throw mismatch(`operator does not exist: ${env.ctx.types.typeText(arg.type).toLowerCase()} ${op} ${env.ctx.types.typeText(element).toLowerCase()}`);
  return { kind: 'quantified', type: BOOL, arg: coerce(env.ctx, arg, fn.argTypes[0]!, 'implicit'), array, op: fn, all };
}

function bindExists(node: AstNode, env: ExprEnv): Expr {
  const ast = node.ast ?? node.value?.[0]?.ast ?? node;
  return bindSubqueryExpr(ast, env, 'exists', null);
}

function bindScalarSubquery(ast: AstNode, env: ExprEnv): Expr {
  return bindSubqueryExpr(ast, env, 'scalar', null);
}

function bindSubqueryExpr(ast: AstNode, env: ExprEnv, mode: 'scalar' | 'exists' | 'in' | 'any' | 'all', test: { left: AstNode; op: string } | null): Expr {
  const child = new Scope(env.scope);
  const { plan, types } = env.bindSubquery(ast, child);
  const correlated = child.usedOuter;
  const id = env.ctx.subqueryId();
  if (mode === 'exists') return { kind: 'subquery', type: BOOL, id, mode, plan, test: null, correlated };
  if (types.length !== 1) throw invalid(mode === 'scalar' ? 'subquery must return only one column' : 'subquery has too many columns');
  if (mode === 'scalar') return { kind: 'subquery', type: types[0]!, id, mode, plan, test: null, correlated };
  const left = bindExpr(test!.left, env);
  const right: Expr = { kind: 'column', type: types[0]!, index: 0, name: '?column?' };
  const unified = unify(env.ctx, [left, right], mode === 'in' ? 'IN' : 'ANY/ALL');
  const call = callByName(env.ctx, test!.op, [unified.exprs[0]!, unified.exprs[1]!], true);
  if (call.kind !== 'call') throw invalid('unsupported subquery comparison');
  const r = unified.exprs[1]!;
  const rightCast = r.kind === 'cast' ? r.cast : null;
  return { kind: 'subquery', type: BOOL, id, mode, plan, test: { left: unified.exprs[0]!, op: call.fn, rightCast }, correlated };
}

/** (a, b) IN (SELECT x, y ...): per-column equality, PostgreSQL's row comparison (3VL). */
function bindTupleIn(ast: AstNode, lefts: readonly AstNode[], env: ExprEnv): Expr {
  const child = new Scope(env.scope);
  const { plan, types } = env.bindSubquery(ast, child);
  if (types.length !== lefts.length) throw invalid(types.length > lefts.length ? 'subquery has too many columns' : 'subquery has too few columns');
  const tuple = lefts.map((l, i) => {
    const left = bindExpr(l, env);
    const right: Expr = { kind: 'column', type: types[i]!, index: i, name: '?column?' };
    const unified = unify(env.ctx, [left, right], 'IN');
    const call = callByName(env.ctx, '=', [unified.exprs[0]!, unified.exprs[1]!], true);
    if (call.kind !== 'call') throw invalid('unsupported subquery comparison');
    const r = unified.exprs[1]!;
    return { left: unified.exprs[0]!, op: call.fn, rightCast: r.kind === 'cast' ? r.cast : null };
  });
  return { kind: 'subquery', type: BOOL, id: env.ctx.subqueryId(), mode: 'in', plan, test: null, tuple, correlated: child.usedOuter };
}

function bindFunctionNode(node: AstNode, env: ExprEnv): Expr {
  const { name } = functionName(node);
  const args: AstNode[] = node.args?.value ?? [];
  if (name === NUM_FN) return exactNumber(env, String(args[0]?.value));
  if (name === OP_FN) return bindRewrittenOperator(String(args[0]?.value), args.slice(1), env);
  if (name === EXTRACT_FN) return bindExtract(args[0] ?? {}, args[1] ?? {}, env);
  if (name === 'exists') return bindExists(args[0] ?? {}, env);
  // node-sql-parser reads `NOT (x)` as a call of a function named "not".
  if (name === 'not' && args.length === 1) return negate(asCondition(env.ctx, bindExpr(args[0]!, env), 'NOT'));
  return env.bindFunction(node, env);
}

function bindRewrittenOperator(op: string, args: AstNode[], env: ExprEnv): Expr {
  if (args.length === 1) return callByName(env.ctx, op, [bindExpr(args[0]!, env)], true);
  const distinct = op === 'is distinct from' || op === 'is not distinct from';
  if (distinct && (rowItems(args[0]) || rowItems(args[1]))) return bindRowDistinct(args[0]!, args[1]!, op === 'is not distinct from', rowEnv(env));
  const left = bindExpr(args[0]!, env);
  const right = bindExpr(args[1]!, env);
  if (distinct) return distinctFrom(env, left, right, op === 'is not distinct from');
  return callByName(env.ctx, op, [left, right], true);
}

function distinctFrom(env: ExprEnv, left: Expr, right: Expr, negated: boolean): Expr {
  const unified = unify(env.ctx, [left, right], 'IS DISTINCT FROM');
  const call = callByName(env.ctx, '=', unified.exprs, true);
  const fn = call.kind === 'call' ? call.fn : env.ctx.types.resolveFunction('=', [unified.type, unified.type]);
  if (!fn) throw mismatch(`operator does not exist: ${unified.type.name} = ${unified.type.name}`);
  return { kind: 'distinct_from', type: BOOL, left: unified.exprs[0]!, right: unified.exprs[1]!, eq: fn, negated };
}

function rowEnv(env: ExprEnv): RowEnv {
  return { ctx: env.ctx, bind: (n) => bindExpr(n, env), distinct: (l, r, negated) => distinctFrom(env, l, r, negated) };
}

function bindCase(node: AstNode, env: ExprEnv): Expr {
  const subject = node.expr ? bindExpr(node.expr, env) : null;
  const whens: { cond: Expr; result: Expr }[] = [];
  let otherwise: Expr = constant(UNKNOWN, null);
  for (const arm of node.args as AstNode[]) {
    if (arm.type === 'else') {
      otherwise = bindExpr(arm.result, env);
      continue;
    }
    const value = bindExpr(arm.cond, env);
    const cond = subject ? callByName(env.ctx, '=', [subject, value], true) : asCondition(env.ctx, value, 'CASE/WHEN');
    whens.push({ cond, result: bindExpr(arm.result, env) });
  }
  const unified = unify(env.ctx, [...whens.map((w) => w.result), otherwise], 'CASE');
  const results = unified.exprs;
  return {
    kind: 'case',
    type: unified.type,
    whens: whens.map((w, i) => ({ cond: w.cond, result: results[i]! })),
    otherwise: results[results.length - 1]!,
  };
}

function bindCast(node: AstNode, env: ExprEnv): Expr {
  if (node.tail) {
    // node-sql-parser: `$1::int + 1` comes back as a cast with a trailing operator.
    const { tail, ...cast } = node;
    return bindExpr({ type: 'binary_expr', operator: tail.operator, left: cast, right: tail.expr }, env);
  }
  let expr = bindExpr(node.expr, env);
  for (const target of (node.target as AstNode[] | undefined) ?? [{}]) expr = coerce(env.ctx, expr, bindTypeName(env.ctx, target), 'explicit');
  return expr;
}

function bindArray(node: AstNode, env: ExprEnv): Expr {
  const items: AstNode[] = node.expr_list?.value ?? [];
  if (items.length === 0) return constant({ name: 'array', element: { name: 'text' } }, []);
  const unified = unify(
    env.ctx,
    items.map((i) => bindExpr(i, env)),
    'ARRAY',
  );
  return { kind: 'array', type: { name: 'array', element: unified.type }, elements: unified.exprs };
}

/** EXTRACT(field FROM source), rewritten by the preprocessor to __svc_extract('field', source). */
function bindExtract(fieldNode: AstNode, sourceNode: AstNode, env: ExprEnv): Expr {
  const field = constant(UNKNOWN, stringValue(fieldNode).toLowerCase());
  const source = bindExpr(sourceNode, env);
  const fn = env.ctx.types.resolveFunction('extract', [UNKNOWN, source.type]) ?? env.ctx.types.resolveFunction('date_part', [UNKNOWN, source.type]);
  if (!fn) throw mismatch(`function extract(unknown, ${env.ctx.types.typeText(source.type).toLowerCase()}) does not exist`);
  return callByName(env.ctx, fn.name === 'date_part' ? 'date_part' : 'extract', [field, source], false);
}

/** LIKE ... ESCAPE 'c': a constant pattern is rewritten to the default backslash escapes. */
function likeEscape(node: AstNode, pattern: Expr, env: ExprEnv): Expr {
  const escapeNode = node?.escape?.value as AstNode | undefined;
  if (!escapeNode) return pattern;
  const escape = bindExpr(escapeNode, env);
  if (pattern.kind !== 'const' || escape.kind !== 'const' || typeof pattern.value !== 'string' || typeof escape.value !== 'string') {
    throw invalid('LIKE ... ESCAPE needs constant pattern and escape strings');
  }
  const e = escape.value;
  if (e.length > 1) throw invalid('invalid escape string', { hint: 'Escape string must be empty or one character.' });
  let out = '';
  const p = pattern.value;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (e !== '' && c === e && i + 1 < p.length) {
      out += `\\${p[++i]!}`;
    } else if (c === '\\') out += '\\\\';
    else out += c;
  }
  return constant(pattern.type, out);
}

/** A string literal's value: node-sql-parser keeps the doubled quote of 'it''s'. */
export function stringValue(node: AstNode): string {
  return literalValue(String(node?.value ?? ''));
}
