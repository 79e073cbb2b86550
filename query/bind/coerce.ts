import { isSvcError } from '../../core/errors.js';
import type { QType, QValue, ResolvedFunction } from '../types/contract.js';
import { constant, TEXT, type Expr } from '../plan/expr.js';
import { mismatch, type BindContext } from './context.js';

/** Same type including modifiers. */
export function sameType(a: QType, b: QType): boolean {
  if (a.name !== b.name) return false;
  if (a.name === 'array') return a.element !== undefined && b.element !== undefined && sameType(a.element, b.element);
  return a.length === b.length && a.precision === b.precision && a.scale === b.scale && a.dimension === b.dimension;
}

const hasModifier = (t: QType): boolean => t.length !== undefined || t.precision !== undefined || t.scale !== undefined || t.dimension !== undefined;

/** Converts an expression to `target`: literal text parsed now, $n typed by context, else a cast. */
export function coerce(ctx: BindContext, expr: Expr, target: QType, mode: 'explicit' | 'assignment' | 'implicit'): Expr {
  if (target.name === 'unknown') return expr;
  if (expr.type.name === target.name && (mode === 'implicit' || !hasModifier(target) || sameType(expr.type, target))) {
    if (expr.type.name !== 'array' || sameType(expr.type, target)) return expr;
  }
  if (expr.kind === 'const' && expr.type.name === 'unknown') {
    if (expr.value === null) return constant(target, null);
    if (mode === 'explicit' && hasModifier(target)) {
      // 'abc'::varchar(2) is 'ab': input as the plain type, then an explicit length coercion.
      const plain: QType = target.name === 'array' ? target : { name: target.name };
      return coerce(ctx, constant(plain, ctx.types.parseText(plain, expr.value as string)), target, mode);
    }
    return constant(target, ctx.types.parseText(target, expr.value as string));
  }
  if (expr.kind === 'param' && expr.type.name === 'unknown') {
    const known = ctx.paramType(expr.index);
    if (known === undefined) {
      ctx.setParamType(expr.index, target);
      return { kind: 'param', index: expr.index, type: target };
    }
    return coerce(ctx, { kind: 'param', index: expr.index, type: known }, target, mode);
  }
  const cast = ctx.types.resolveCast(expr.type, target, mode);
  if (!cast) throw cannotCoerce(ctx, expr.type, target, mode);
  if (expr.kind === 'const') {
    if (expr.value === null) return constant(target, null);
    const folded = tryFold(() => cast(expr.value));
    if (folded.ok) return constant(target, folded.value);
  }
  return { kind: 'cast', type: target, cast, arg: expr };
}

function cannotCoerce(ctx: BindContext, from: QType, to: QType, mode: string): Error {
  const a = ctx.types.typeText(from).toLowerCase();
  const b = ctx.types.typeText(to).toLowerCase();
  if (mode === 'explicit') return mismatch(`cannot cast type ${a} to ${b}`, { from: a, to: b });
  return mismatch(`expression of type ${a} cannot be used as ${b}`, { from: a, to: b });
}

export function tryFold(fn: () => QValue): { ok: true; value: QValue } | { ok: false } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    if (isSvcError(error)) return { ok: false };
    throw error;
  }
}

/** The final type of an expression whose type is still unknown (an untyped literal or $n): text. */
export function resolveUnknown(ctx: BindContext, expr: Expr): Expr {
  if (expr.type.name !== 'unknown') return expr;
  return coerce(ctx, expr, TEXT, 'implicit');
}

/** PostgreSQL's rule for UNION/CASE/COALESCE/IN: every expression converted to the common type. */
export function unify(ctx: BindContext, exprs: readonly Expr[], what: string): { type: QType; exprs: Expr[] } {
  const known = exprs.map((e) => e.type);
  const common = ctx.types.commonType(known);
  if (!common) {
    const names = [...new Set(known.map((t) => ctx.types.typeText(t).toLowerCase()))];
    throw mismatch(`${what} types ${names.join(' and ')} cannot be matched`, { types: names });
  }
  const type = common.name === 'unknown' ? TEXT : common;
  return { type, exprs: exprs.map((e) => coerce(ctx, e, type, 'implicit')) };
}

/** A call of a resolved function with its arguments coerced; folded when immutable and constant. */
export function callExpr(ctx: BindContext, fn: ResolvedFunction, args: readonly Expr[], label: string): Expr {
  const coerced = args.map((a, i) => coerce(ctx, a, fn.argTypes[i] ?? a.type, 'implicit'));
  if (fn.immutable && coerced.every((a) => a.kind === 'const')) {
    const values = coerced.map((a) => (a as { value: QValue }).value);
    if (fn.strict && values.some((v) => v === null)) return constant(fn.returnType, null);
    const folded = tryFold(() => fn.impl(values));
    if (folded.ok) return constant(fn.returnType, folded.value);
  }
  return { kind: 'call', type: fn.returnType, fn, args: coerced, label };
}

/** Resolves and calls an operator or function by name; throws TYPE_MISMATCH when none fits. */
export function callByName(ctx: BindContext, name: string, args: readonly Expr[], operator: boolean): Expr {
  const fn = ctx.types.resolveFunction(
    name,
    args.map((a) => a.type),
  );
  if (!fn) {
    // PostgreSQL names an untyped literal's type "unknown".
    const types = args.map((a) => (a.type.name === 'unknown' ? 'unknown' : ctx.types.typeText(a.type).toLowerCase()));
    const problem = ctx.types.functionIsAmbiguous(
      name,
      args.map((a) => a.type),
    )
      ? 'is not unique'
      : 'does not exist';
    if (operator) {
      const shown = types.length === 1 ? `${name} ${types[0]}` : `${types[0]} ${name} ${types[1]}`;
      throw mismatch(problem === 'is not unique' ? `operator is not unique: ${shown}` : `operator does not exist: ${shown}`, { operator: name, types });
    }
    throw mismatch(`function ${name}(${types.join(', ')}) ${problem}`, { function: name, types });
  }
  return callExpr(ctx, fn, args, name);
}

/** Coerces to boolean for WHERE/HAVING/ON/CASE WHEN ("argument of WHERE must be type boolean"). */
export function asCondition(ctx: BindContext, expr: Expr, clause: string): Expr {
  if (expr.type.name === 'bool') return expr;
  if (expr.type.name === 'unknown') return coerce(ctx, expr, { name: 'bool' }, 'implicit');
  const shown = ctx.types.typeText(expr.type).toLowerCase();
  throw mismatch(`argument of ${clause} must be type boolean, not type ${shown}`, { clause, type: shown });
}
