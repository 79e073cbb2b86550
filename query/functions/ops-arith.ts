/**
 * Arithmetic operators on the numeric types: + - * / % ^ and unary - +, with PostgreSQL's
 * overflow and division-by-zero errors. int2/int4 are numbers checked against their range,
 * int8 is bigint, floats are doubles (float4 rounded through Math.fround), numeric is exact.
 * The catalog mirrors pg_operator, including the float4/float8 cross-type entries that make
 * float4 <op> int4 resolve to float8 as PostgreSQL does.
 */
import type { QType, QValue } from '../types/contract.js';
import { divisionByZero, outOfRange } from '../types/errors.js';
import * as N from '../types/numeric.js';
import { T } from '../types/qtype.js';
import { checkInt2, checkInt4, checkInt8 } from '../types/scalar-text.js';
import { type FnDef, type Impl } from './registry.js';
import { floatPower, numericPower } from './math-power.js';

type Op = '+' | '-' | '*' | '/' | '%';

function intOp(op: Op, check: (v: number) => number): Impl {
  switch (op) {
    case '+':
      return ([a, b]) => check((a as number) + (b as number));
    case '-':
      return ([a, b]) => check((a as number) - (b as number));
    case '*':
      return ([a, b]) => check((a as number) * (b as number));
    case '/':
      return ([a, b]) => {
        if (b === 0) throw divisionByZero();
        return check(Math.trunc((a as number) / (b as number)));
      };
    case '%':
      return ([a, b]) => {
        if (b === 0) throw divisionByZero();
        return ((a as number) % (b as number)) + 0;
      };
  }
}

function int8Op(op: Op): Impl {
  switch (op) {
    case '+':
      return ([a, b]) => checkInt8((a as bigint) + (b as bigint));
    case '-':
      return ([a, b]) => checkInt8((a as bigint) - (b as bigint));
    case '*':
      return ([a, b]) => checkInt8((a as bigint) * (b as bigint));
    case '/':
      return ([a, b]) => {
        if (b === 0n) throw divisionByZero();
        return checkInt8((a as bigint) / (b as bigint));
      };
    case '%':
      return ([a, b]) => {
        if (b === 0n) throw divisionByZero();
        return (a as bigint) % (b as bigint);
      };
  }
}

/** float results: overflow from finite inputs and underflow from non-zero inputs are errors. */
function floatResult(r: number, a: number, b: number, float4: boolean, op: Op): number {
  const v = float4 ? Math.fround(r) : r;
  if (!Number.isFinite(v) && !Number.isNaN(v) && Number.isFinite(a) && Number.isFinite(b)) throw outOfRange('value out of range: overflow');
  if (v === 0 && (op === '*' || op === '/') && a !== 0 && Number.isFinite(b) && (op === '/' || b !== 0)) {
    throw outOfRange('value out of range: underflow');
  }
  return v;
}

function floatOp(op: Op, float4: boolean): Impl {
  return ([x, y]) => {
    const a = x as number,
      b = y as number;
    switch (op) {
      case '+':
        return floatResult(a + b, a, b, float4, op);
      case '-':
        return floatResult(a - b, a, b, float4, op);
      case '*':
        return floatResult(a * b, a, b, float4, op);
      case '/':
        if (b === 0 && !Number.isNaN(a)) throw divisionByZero();
        return floatResult(a / b, a, b, float4, op);
      default:
        throw new Error('no float %');
    }
  };
}

const NUMERIC_OPS: Record<Op, (a: string, b: string) => string> = {
  '+': N.numericAdd,
  '-': N.numericSub,
  '*': N.numericMul,
  '/': N.numericDiv,
  '%': N.numericMod,
};

function binary(name: string, a: QType, b: QType, ret: QType, impl: Impl): FnDef {
  return { name, params: [a, b], ret, make: () => impl };
}

function arithDefs(): FnDef[] {
  const defs: FnDef[] = [];
  for (const op of ['+', '-', '*', '/', '%'] as const) {
    defs.push(binary(op, T.int2, T.int2, T.int2, intOp(op, checkInt2)));
    defs.push(binary(op, T.int4, T.int4, T.int4, intOp(op, checkInt4)));
    defs.push(binary(op, T.int8, T.int8, T.int8, int8Op(op)));
    defs.push(binary(op, T.numeric, T.numeric, T.numeric, ([a, b]) => NUMERIC_OPS[op](a as string, b as string)));
    if (op === '%') continue;
    defs.push(binary(op, T.float4, T.float4, T.float4, floatOp(op, true)));
    defs.push(binary(op, T.float8, T.float8, T.float8, floatOp(op, false)));
    defs.push(binary(op, T.float4, T.float8, T.float8, floatOp(op, false)));
    defs.push(binary(op, T.float8, T.float4, T.float8, floatOp(op, false)));
  }
  return defs;
}

function unaryDefs(): FnDef[] {
  const neg: [QType, Impl][] = [
    [T.int2, ([a]) => checkInt2(-(a as number))],
    [T.int4, ([a]) => checkInt4(-(a as number))],
    [T.int8, ([a]) => checkInt8(-(a as bigint))],
    [T.float4, ([a]) => -(a as number)],
    [T.float8, ([a]) => -(a as number)],
    [T.numeric, ([a]) => N.numericNeg(a as string)],
  ];
  const defs: FnDef[] = [];
  for (const [t, impl] of neg) {
    defs.push({ name: '-', params: [t], ret: t, make: () => impl });
    defs.push({
      name: '+',
      params: [t],
      ret: t,
      make:
        () =>
        ([a]) =>
          a as QValue,
    });
  }
  return defs;
}

function powerDefs(): FnDef[] {
  return [
    binary('^', T.float8, T.float8, T.float8, ([a, b]) => floatPower(a as number, b as number)),
    binary('^', T.numeric, T.numeric, T.numeric, ([a, b]) => numericPower(a as string, b as string)),
  ];
}

export const ARITH_DEFS: readonly FnDef[] = [...arithDefs(), ...unaryDefs(), ...powerDefs()];
