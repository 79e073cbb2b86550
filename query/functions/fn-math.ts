/** Mathematical functions (PostgreSQL 15 "Mathematical Functions and Operators"). */
import type { QType, QValue } from '../types/contract.js';
import * as D from '../types/decimal.js';
import { dataError, divisionByZero, outOfRange } from '../types/errors.js';
import * as N from '../types/numeric.js';
import { T } from '../types/qtype.js';
import { checkInt2, checkInt4, checkInt8 } from '../types/scalar-text.js';
import { floatPower, numericPower } from './math-power.js';
import { numericExp, numericLn, numericLog, numericLog10 } from './numeric-transcendental.js';
import type { FnDef, Impl } from './registry.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl, volatile = false): FnDef {
  return { name, params, ret, make: () => impl, volatile };
}

const num = (v: QValue | undefined): string => v as string;
const f8 = (v: QValue | undefined): number => v as number;

/** rint: round half to even (float round() in PostgreSQL). */
export function rint(x: number): number {
  if (!Number.isFinite(x)) return x;
  const r = Math.round(x);
  const res = Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  return res === 0 && (x < 0 || Object.is(x, -0)) ? -0 : res;
}

function floatCheck(r: number, x: number): number {
  if (!Number.isFinite(r) && Number.isFinite(x)) throw outOfRange('value out of range: overflow');
  return r;
}

function log10Checked(x: number): number {
  if (x === 0) throw dataError('cannot take logarithm of zero', '2201E');
  if (x < 0) throw dataError('cannot take logarithm of a negative number', '2201E');
  return Math.log10(x);
}

function lnChecked(x: number): number {
  if (x === 0) throw dataError('cannot take logarithm of zero', '2201E');
  if (x < 0) throw dataError('cannot take logarithm of a negative number', '2201E');
  return Math.log(x);
}

function absDefs(): FnDef[] {
  return [
    fn('abs', [T.int2], T.int2, ([a]) => checkInt2(Math.abs(a as number))),
    fn('abs', [T.int4], T.int4, ([a]) => checkInt4(Math.abs(a as number))),
    fn('abs', [T.int8], T.int8, ([a]) => checkInt8((a as bigint) < 0n ? -(a as bigint) : (a as bigint))),
    fn('abs', [T.float4], T.float4, ([a]) => Math.abs(f8(a))),
    fn('abs', [T.float8], T.float8, ([a]) => Math.abs(f8(a))),
    fn('abs', [T.numeric], T.numeric, ([a]) => N.numericAbs(num(a))),
  ];
}

function roundingDefs(): FnDef[] {
  const defs: FnDef[] = [];
  for (const name of ['ceil', 'ceiling']) {
    defs.push(fn(name, [T.float8], T.float8, ([a]) => Math.ceil(f8(a))));
    defs.push(fn(name, [T.numeric], T.numeric, ([a]) => N.numericCeil(num(a))));
  }
  defs.push(
    fn('floor', [T.float8], T.float8, ([a]) => Math.floor(f8(a))),
    fn('floor', [T.numeric], T.numeric, ([a]) => N.numericFloor(num(a))),
    fn('round', [T.float8], T.float8, ([a]) => rint(f8(a))),
    fn('round', [T.numeric], T.numeric, ([a]) => N.numericRound(num(a), 0, 'round')),
    fn('round', [T.numeric, T.int4], T.numeric, ([a, n]) => N.numericRound(num(a), n as number, 'round')),
    fn('trunc', [T.float8], T.float8, ([a]) => Math.trunc(f8(a))),
    fn('trunc', [T.numeric], T.numeric, ([a]) => N.numericRound(num(a), 0, 'trunc')),
    fn('trunc', [T.numeric, T.int4], T.numeric, ([a, n]) => N.numericRound(num(a), n as number, 'trunc')),
    fn('sign', [T.float8], T.float8, ([a]) => (Number.isNaN(f8(a)) ? NaN : f8(a) > 0 ? 1 : f8(a) < 0 ? -1 : 0)),
    fn('sign', [T.numeric], T.numeric, ([a]) => N.numericSign(num(a))),
    fn('scale', [T.numeric], T.int4, ([a]) => {
      const x = N.toNum(num(a));
      return typeof x === 'string' ? null : x.scale;
    }),
    fn('min_scale', [T.numeric], T.int4, ([a]) => {
      const x = N.toNum(num(a));
      return typeof x === 'string' ? null : D.normalize(x).scale;
    }),
    fn('trim_scale', [T.numeric], T.numeric, ([a]) => {
      const x = N.toNum(num(a));
      return typeof x === 'string' ? x : N.fromDecimal(D.normalize(x));
    }),
  );
  return defs;
}

function powerDefs(): FnDef[] {
  const defs: FnDef[] = [];
  for (const name of ['power', 'pow']) {
    defs.push(fn(name, [T.float8, T.float8], T.float8, ([a, b]) => floatPower(f8(a), f8(b))));
    defs.push(fn(name, [T.numeric, T.numeric], T.numeric, ([a, b]) => numericPower(num(a), num(b))));
  }
  defs.push(
    fn('sqrt', [T.float8], T.float8, ([a]) => {
      if (f8(a) < 0) throw dataError('cannot take square root of a negative number', '2201F');
      return Math.sqrt(f8(a));
    }),
    fn('sqrt', [T.numeric], T.numeric, ([a]) => N.numericSqrt(num(a))),
    fn('cbrt', [T.float8], T.float8, ([a]) => Math.cbrt(f8(a))),
    fn('exp', [T.float8], T.float8, ([a]) => {
      const r = Math.exp(f8(a));
      if (r === 0 && Number.isFinite(f8(a))) throw outOfRange('value out of range: underflow');
      return floatCheck(r, f8(a));
    }),
    fn('exp', [T.numeric], T.numeric, ([a]) => numericExp(num(a))),
    fn('ln', [T.float8], T.float8, ([a]) => lnChecked(f8(a))),
    fn('ln', [T.numeric], T.numeric, ([a]) => numericLn(num(a))),
    fn('log', [T.float8], T.float8, ([a]) => log10Checked(f8(a))),
    fn('log', [T.numeric], T.numeric, ([a]) => numericLog10(num(a))),
    fn('log10', [T.float8], T.float8, ([a]) => log10Checked(f8(a))),
    fn('log10', [T.numeric], T.numeric, ([a]) => numericLog10(num(a))),
    fn('log', [T.numeric, T.numeric], T.numeric, ([b, x]) => numericLog(num(b), num(x))),
    {
      name: '|/',
      params: [T.float8],
      ret: T.float8,
      make:
        () =>
        ([a]) => {
          if (f8(a) < 0) throw dataError('cannot take square root of a negative number', '2201F');
          return Math.sqrt(f8(a));
        },
    },
    {
      name: '||/',
      params: [T.float8],
      ret: T.float8,
      make:
        () =>
        ([a]) =>
          Math.cbrt(f8(a)),
    },
  );
  return defs;
}

function intMod(check: (v: number) => number): Impl {
  return ([a, b]) => {
    if (b === 0) throw divisionByZero();
    return check(((a as number) % (b as number)) + 0);
  };
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a,
    y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

function divModDefs(): FnDef[] {
  return [
    fn('mod', [T.int2, T.int2], T.int2, intMod(checkInt2)),
    fn('mod', [T.int4, T.int4], T.int4, intMod(checkInt4)),
    fn('mod', [T.int8, T.int8], T.int8, ([a, b]) => {
      if (b === 0n) throw divisionByZero();
      return (a as bigint) % (b as bigint);
    }),
    fn('mod', [T.numeric, T.numeric], T.numeric, ([a, b]) => N.numericMod(num(a), num(b))),
    fn('div', [T.numeric, T.numeric], T.numeric, ([a, b]) => N.numericDivTrunc(num(a), num(b))),
    fn('gcd', [T.int4, T.int4], T.int4, ([a, b]) => checkInt4(Number(gcd(BigInt(a as number), BigInt(b as number))))),
    fn('gcd', [T.int8, T.int8], T.int8, ([a, b]) => checkInt8(gcd(a as bigint, b as bigint))),
    fn('lcm', [T.int4, T.int4], T.int4, ([a, b]) => {
      const x = BigInt(a as number),
        y = BigInt(b as number);
      if (x === 0n || y === 0n) return 0;
      const l = (x / gcd(x, y)) * y;
      return checkInt4(Number(l < 0n ? -l : l));
    }),
    fn('lcm', [T.int8, T.int8], T.int8, ([a, b]) => {
      const x = a as bigint,
        y = b as bigint;
      if (x === 0n || y === 0n) return 0n;
      const l = (x / gcd(x, y)) * y;
      return checkInt8(l < 0n ? -l : l);
    }),
  ];
}

function trigDefs(): FnDef[] {
  const t = (name: string, f: (x: number) => number, domain?: (x: number) => boolean): FnDef =>
    fn(name, [T.float8], T.float8, ([a]) => {
      const x = f8(a);
      if (domain !== undefined && !Number.isNaN(x) && !domain(x)) throw dataError('input is out of range', '22003');
      return f(x);
    });
  const finite = (x: number): boolean => Number.isFinite(x);
  const unit = (x: number): boolean => x >= -1 && x <= 1;
  return [
    t('sin', Math.sin, finite),
    t('cos', Math.cos, finite),
    t('tan', Math.tan, finite),
    t('asin', Math.asin, unit),
    t('acos', Math.acos, unit),
    t('atan', Math.atan),
    t('cot', (x) => 1 / Math.tan(x), finite),
    t('sinh', Math.sinh),
    t('cosh', Math.cosh),
    t('tanh', Math.tanh),
    t('asinh', Math.asinh),
    t('acosh', Math.acosh, (x) => x >= 1),
    t('atanh', Math.atanh, unit),
    fn('atan2', [T.float8, T.float8], T.float8, ([a, b]) => Math.atan2(f8(a), f8(b))),
    t('degrees', (x) => (x * 180) / Math.PI),
    t('radians', (x) => (x * Math.PI) / 180),
    fn('pi', [], T.float8, () => Math.PI),
    fn('random', [], T.float8, () => Math.random(), true),
  ];
}

/** Prefix @ is abs. */
const AT_DEFS: FnDef[] = absDefs().map((d) => ({ ...d, name: '@' }));

export const MATH_FN_DEFS: readonly FnDef[] = [...AT_DEFS, ...absDefs(), ...roundingDefs(), ...powerDefs(), ...divModDefs(), ...trigDefs()];
