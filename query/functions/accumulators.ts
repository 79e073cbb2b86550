/**
 * Aggregate states for the aggregates that run over every row of big scans (count, sum, avg):
 * mutable, and without a bigint or an object allocated per row. Each keeps PostgreSQL's exact
 * result: integers are summed in a JS number only while that is exact (below 2^53), NUMERIC text
 * is summed as an integer count of 10^-scale units while it fits, and both move to bigint
 * arithmetic past that.
 */
import type { AggregateState } from '../types/contract.js';
import * as D from '../types/decimal.js';
import * as N from '../types/numeric.js';
import { checkInt8 } from '../types/scalar-text.js';

const SAFE = Number.MAX_SAFE_INTEGER;
const POW10 = Array.from({ length: 16 }, (_, i) => 10 ** i);

/** count(*) and count(x): a row count as int8. */
export function countState(): AggregateState {
  let n = 0;
  return {
    step: () => {
      n++;
    },
    result: () => BigInt(n),
  };
}

/** Sum of int2/int4 (or int8 given as bigint) values: exact, in a number while it can be. */
class IntegerSum {
  n = 0;
  private small = 0;
  private big = 0n;

  add(v: number | bigint): void {
    this.n++;
    if (typeof v === 'number' && Math.abs(this.small) + Math.abs(v) <= SAFE) {
      this.small += v;
      return;
    }
    this.big += BigInt(this.small) + BigInt(v);
    this.small = 0;
  }

  total(): bigint {
    return this.big + BigInt(this.small);
  }
}

/** sum(int2), sum(int4): int8. */
export function intSumState(): AggregateState {
  const s = new IntegerSum();
  return { step: (args) => s.add(args[0] as number), result: () => (s.n === 0 ? null : checkInt8(s.total())) };
}

/** avg over integers: the exact sum divided once at the end (numeric result, division scale). */
export function intAvgState(): AggregateState {
  const s = new IntegerSum();
  return { step: (args) => s.add(args[0] as number | bigint), result: () => (s.n === 0 ? null : N.numericDiv(s.total().toString(), String(s.n))) };
}

/** sum(float8) and avg(float4/float8). */
export function floatSumState(average: boolean): AggregateState {
  let sum = -0; // the IEEE identity of +: sum(-0) is -0, as in PostgreSQL
  let n = 0;
  return {
    step: (args) => {
      sum += args[0] as number;
      n++;
    },
    result: () => (n === 0 ? null : average ? sum / n : sum),
  };
}

/**
 * Exact sum of NUMERIC text. The fast part is `units` x 10^-scale in a JS number (exact below
 * 2^53); `scale` only grows, and is the display scale of the result (the largest input scale, as
 * PostgreSQL's). What does not fit moves into `rest`, a bigint Decimal; NaN and the infinities
 * switch to NUMERIC's text arithmetic for good.
 */
export class NumericSum {
  n = 0;
  private units = 0;
  private scale = 0;
  private rest: D.Decimal = D.ZERO;
  private special: string | null = null;

  add(v: string): void {
    this.n++;
    if (this.special === null && this.addFast(v)) return;
    this.flush();
    if (this.special === null) {
      const x = N.toNum(v);
      if (typeof x !== 'string') {
        this.rest = D.add(this.rest, x);
        return;
      }
      this.special = N.fromDecimal(this.rest);
    }
    this.special = N.numericAdd(this.special, v);
  }

  /** The sum as NUMERIC text (null before any input). */
  text(): string | null {
    if (this.n === 0) return null;
    if (this.special !== null) return this.special;
    return N.fromDecimal(D.add(this.rest, D.dec(BigInt(this.units), this.scale)));
  }

  /** Plain decimal text of at most 15 digits ('-12.50', '.5', '7'); false when not such text. */
  private addFast(v: string): boolean {
    let i = v.charCodeAt(0) === 45 ? 1 : 0;
    const negative = i === 1;
    let digits = 0;
    let fraction = -1;
    let value = 0;
    for (; i < v.length; i++) {
      const c = v.charCodeAt(i);
      if (c >= 48 && c <= 57) {
        value = value * 10 + (c - 48);
        digits++;
        if (fraction >= 0) fraction++;
      } else if (c === 46 && fraction < 0) fraction = 0;
      else return false;
    }
    if (digits === 0 || digits > 15) return false;
    const scale = fraction < 0 ? 0 : fraction;
    let x = negative ? -value : value;
    if (scale > this.scale) {
      const factor = POW10[scale - this.scale]!;
      if (Math.abs(this.units) * factor > SAFE) this.flush();
      this.units *= factor;
      this.scale = scale;
    } else if (scale < this.scale) {
      x *= POW10[this.scale - scale]!;
      if (Math.abs(x) > SAFE) return false;
    }
    if (Math.abs(this.units) + Math.abs(x) > SAFE) this.flush();
    this.units += x;
    return true;
  }

  private flush(): void {
    if (this.units === 0) return;
    this.rest = D.add(this.rest, D.dec(BigInt(this.units), this.scale));
    this.units = 0;
  }
}

export function numericSumState(): AggregateState {
  const s = new NumericSum();
  return { step: (args) => s.add(args[0] as string), result: () => s.text() };
}

/** avg over numeric: the exact sum divided by the count with numeric division's scale. */
export function numericAvgState(): AggregateState {
  const s = new NumericSum();
  return {
    step: (args) => s.add(args[0] as string),
    result: () => {
      const t = s.text();
      return t === null ? null : N.numericDiv(t, String(s.n));
    },
  };
}
