import type { SqlExpr } from '../parse/index.js';
import { BOOL, constant, INT4, INT8, type Expr } from '../plan/expr.js';
import { isSvcError } from '../../core/errors.js';
import type { BindContext } from '../bind/index.js';
import type { CastFn, QType, QValue } from '../types/contract.js';

/** Decimal integers this short (a minus sign folded in) are exact as a JS number (an int4 or an int8 constant). */
const INTEGER_TEXT = /^-?[0-9]{1,15}$/;
// Decimals of 1-15 digits, a point and 1-15 digits (a minus sign folded in) read exactly as PostgreSQL's numeric then
// float8 gives (both round the same decimal once): number() takes those into a float8 column.
const INT4_MIN = -2147483648;
const INT4_MAX = 2147483647;

/** LiteralBinder.value's answer for a cell it does not bind (the generic path binds it). */
export const NOT_BOUND: unique symbol = Symbol('not bound');

/**
 * Binds the literals of a VALUES list for one target column as bindExpr then coerce(...,
 * 'assignment') would, without their generic path per cell (a regular expression and a BigInt per
 * integer, a NUMERIC parse per decimal, a cast lookup per cell): a 1,000-row VALUES spent most of
 * its binding there. Strings and NULL go straight to the column type's input function, as coerce
 * sends an untyped constant (the same function, so the same value or the same error). Returns null
 * for anything else (the generic path then binds it), including a number whose cast fails, so
 * every error stays exactly the generic one.
 */
export class LiteralBinder {
  /** Cast from an int4 / int8 constant to the column type, resolved once (null: none). */
  private readonly casts = new Map<string, CastFn | null>();

  constructor(
    private readonly ctx: BindContext,
    private readonly target: QType,
  ) {}

  bind(node: SqlExpr): Expr | null {
    const value = this.value(node);
    if (value === NOT_BOUND) return null;
    // coerce keeps a constant of the target's own type as it is, and a boolean into a boolean column; the rest is converted to the target.
    return constant(this.constantType(node), value);
  }

  /**
   * The value bind(node)'s constant holds, without the constant (a VALUES list bound for one run
   * only keeps no cell: its values go straight into the row), or NOT_BOUND where bind gives null.
   */
  value(node: SqlExpr): QValue | typeof NOT_BOUND {
    // What coerce makes of an untyped constant ('text', NULL) in assignment: the column type's input function, once.
    if (node.kind === 'string') return this.target.name === 'unknown' ? NOT_BOUND : this.ctx.types.parseText(this.target, node.value);
    if (node.kind === 'null') return this.target.name === 'unknown' ? NOT_BOUND : null;
    // A boolean constant into a boolean column is kept as it is (coerce's same-type case); other targets convert the generic way.
    if (node.kind === 'bool') return this.target.name === 'bool' ? node.value : NOT_BOUND;
    if (node.kind !== 'number') return NOT_BOUND;
    return this.number(node.text);
  }

  /**
   * A number literal's value: 1-15 digits as an int4 or int8 constant coerced to the target, a decimal (above) into
   * float8; one pass, no regular expression. A leading minus is the parser's folded sign (PostgreSQL's doNegate):
   * -5 and -1.5 are bound here as 5 and 1.5 are. Before, they went the generic way (a regular expression, a BigInt and
   * a cast look-up per cell), so a bulk load of negative numbers was slower, and a server's first statements of
   * negative numbers (the bench's warm-up) trained none of this path: the first positive ones deoptimized it.
   */
  private number(text: string): QValue | typeof NOT_BOUND {
    const length = text.length;
    const from = text.charCodeAt(0) === 45 ? 1 : 0;
    let dot = -1;
    for (let i = from; i < length; i++) {
      const c = text.charCodeAt(i);
      if (c === 46 && dot < 0) dot = i;
      else if (c < 48 || c > 57) return NOT_BOUND;
    }
    if (dot < 0) {
      const digits = length - from;
      if (digits === 0 || digits > 15) return NOT_BOUND;
      // + 0: "-0" is the integer 0 (exactNumber's BigInt has no negative zero), not the float -0.
      const n = Number(text) + 0;
      return n >= INT4_MIN && n <= INT4_MAX ? this.coerced(INT4, n) : this.coerced(INT8, BigInt(n));
    }
    // numeric -> float8 is Number() of the numeric's text: the same value as Number() of the literal, but for a
    // negative zero (numeric has none: -0.0 is 0): that one goes the generic way.
    const whole = dot - from;
    const fraction = length - dot - 1;
    if (this.target.name !== 'float8' || whole < 1 || whole > 15 || fraction < 1 || fraction > 15) return NOT_BOUND;
    const value = Number(text);
    return value === 0 && from === 1 ? NOT_BOUND : value;
  }

  /** The type of bind(node)'s constant: an integer of the target's own type stays the int4 / int8 it was read as (exactNumber's ranges); the rest take the target's. */
  private constantType(node: SqlExpr): QType {
    if (node.kind === 'bool') return BOOL;
    if (node.kind === 'number' && INTEGER_TEXT.test(node.text)) {
      const n = Number(node.text);
      const from = n >= INT4_MIN && n <= INT4_MAX ? INT4 : INT8;
      if (from.name === this.target.name) return from;
    }
    return this.target;
  }

  private coerced(from: QType, value: number | bigint): QValue | typeof NOT_BOUND {
    // coerce keeps a constant of the target's own type as it is (int2..int8 take no type modifier).
    if (from.name === this.target.name) return value;
    let cast = this.casts.get(from.name);
    if (cast === undefined) this.casts.set(from.name, (cast = this.ctx.types.resolveCast(from, this.target, 'assignment')));
    if (cast === null) return NOT_BOUND;
    try {
      return cast(value);
    } catch (error) {
      // As coerce's fold: a failing cast is left to the generic path (it binds a cast that fails when run).
      if (isSvcError(error)) return NOT_BOUND;
      throw error;
    }
  }
}
