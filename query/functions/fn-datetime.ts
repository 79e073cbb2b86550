/**
 * Date/time functions. now() and its synonyms read the wall clock when called (the engine
 * evaluates them once per statement where PostgreSQL does; they are marked volatile so they are
 * never folded at plan time). The session time zone is UTC.
 */
import type { Interval, QType, QValue } from '../types/contract.js';
import {
  checkTimestamp,
  currentTimestampUs,
  daysFromCivil,
  daysInMonth,
  isFiniteDate,
  isFiniteTimestamp,
  splitTimestamp,
  TIMESTAMP_INFINITY,
  TIMESTAMP_MINUS_INFINITY,
  USECS_PER_DAY,
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  dateToTimestamp,
} from '../types/datetime.js';
import { dataError } from '../types/errors.js';
import { checkInterval, justifyDays, justifyHours, justifyInterval } from '../types/interval.js';
import * as N from '../types/numeric.js';
import { T } from '../types/qtype.js';
import { age, extractInterval, extractTimestamp, truncInterval, truncTimestamp, type TsKind } from './datetime-fields.js';
import { rint } from './fn-math.js';
import { toCharTimestamp } from './to-char.js';
import { toDate, toTimestampFromText } from './to-date.js';
import type { FnDef, Impl } from './registry.js';

function fn(name: string, params: QType[], ret: QType, impl: Impl, volatile = false): FnDef {
  return { name, params, ret, make: () => impl, volatile };
}

const ts = (v: QValue | undefined): bigint => v as bigint;
const iv = (v: QValue | undefined): Interval => v as Interval;

function clockDefs(): FnDef[] {
  const now = (): QValue => currentTimestampUs();
  const defs = ['now', 'current_timestamp', 'transaction_timestamp', 'statement_timestamp', 'clock_timestamp'].map((name) =>
    fn(name, [], T.timestamptz, now, true),
  );
  defs.push(
    fn('localtimestamp', [], T.timestamp, now, true),
    fn('current_date', [], T.date, () => splitTimestamp(currentTimestampUs()).days, true),
  );
  return defs;
}

function fieldDefs(): FnDef[] {
  const defs: FnDef[] = [];
  const kinds: [QType, TsKind][] = [
    [T.timestamp, 'timestamp'],
    [T.timestamptz, 'timestamptz'],
  ];
  for (const [t, kind] of kinds) {
    defs.push(
      fn('date_trunc', [T.text, t], t, ([f, v]) => truncTimestamp(f as string, ts(v!), kind)),
      fn('date_part', [T.text, t], T.float8, ([f, v]) => numOrNull(extractTimestamp(f as string, ts(v!), kind))),
      fn('extract', [T.text, t], T.numeric, ([f, v]) => extractTimestamp(f as string, ts(v!), kind)),
    );
  }
  defs.push(
    fn('extract', [T.text, T.date], T.numeric, ([f, v]) =>
      isFiniteDate(v as number)
        ? extractTimestamp(f as string, dateToTimestamp(v as number), 'date')
        : extractTimestamp(f as string, dateToTimestamp(v as number), 'date'),
    ),
    fn('date_trunc', [T.text, T.interval], T.interval, ([f, v]) => truncInterval(f as string, iv(v!))),
    fn('date_part', [T.text, T.interval], T.float8, ([f, v]) => Number(extractInterval(f as string, iv(v!)))),
    fn('extract', [T.text, T.interval], T.numeric, ([f, v]) => extractInterval(f as string, iv(v!))),
  );
  return defs;
}

function numOrNull(s: string | null): QValue {
  return s === null ? null : N.numericToFloat(s);
}

function makeDate(y: number, m: number, d: number): number {
  const year = y < 0 ? y + 1 : y;
  if (y === 0 || m < 1 || m > 12 || d < 1 || d > daysInMonth(year, m)) {
    throw dataError(`date field value out of range: ${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`, '22008');
  }
  return daysFromCivil(year, m, d);
}

function makeTimestamp(args: readonly QValue[]): bigint {
  const [y, mo, d, h, mi, sec] = args as number[];
  const days = makeDate(y!, mo!, d!);
  if (h! < 0 || h! > 24 || mi! < 0 || mi! > 59 || sec! < 0 || sec! > 60 || (h === 24 && (mi! > 0 || sec! > 0))) {
    throw dataError(`time field value out of range: ${h}:${String(mi).padStart(2, '0')}:${String(sec).padStart(2, '0')}`, '22008');
  }
  const us = BigInt(h!) * USECS_PER_HOUR + BigInt(mi!) * USECS_PER_MINUTE + BigInt(rint(sec! * 1e6));
  return checkTimestamp(BigInt(days) * USECS_PER_DAY + us);
}

function toTimestamp(seconds: number): bigint {
  if (Number.isNaN(seconds)) throw dataError('timestamp cannot be NaN', '22008');
  if (seconds === Infinity) return TIMESTAMP_INFINITY;
  if (seconds === -Infinity) return TIMESTAMP_MINUS_INFINITY;
  // PostgreSQL's float8_timestamptz: the range check on the seconds, then the shift to its epoch
  // (2000-01-01) before rounding to µs, so that the float rounds as there near the ends
  // (9224318015999 → 294276-12-31 23:59:58.999552; µs from 1970 would pass int64's range).
  if (seconds < TO_TIMESTAMP_SECONDS_MIN || seconds >= TO_TIMESTAMP_SECONDS_END) throw dataError(`timestamp out of range: "${printfG(seconds)}"`, '22008');
  const us = rint((seconds - POSTGRES_EPOCH_SECONDS) * 1e6);
  return checkTimestamp(BigInt(us) + BigInt(POSTGRES_EPOCH_SECONDS) * 1_000_000n);
}

/** C's printf %g (6 significant digits), as PostgreSQL's message prints the seconds: 9.22432e+12. */
function printfG(x: number): string {
  const [mantissa, exp] = x.toExponential(5).split('e') as [string, string];
  const e = Number(exp);
  const trim = (t: string): string => (t.includes('.') ? t.replace(/\.?0+$/, '') : t);
  if (e < -4 || e >= 6) return `${trim(mantissa)}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  return trim(x.toFixed(5 - e));
}

/** Seconds from 1970-01-01 to PostgreSQL's epoch 2000-01-01, and to_timestamp's range (Julian days 0 .. TIMESTAMP_END_JULIAN). */
const POSTGRES_EPOCH_SECONDS = 946_684_800;
const TO_TIMESTAMP_SECONDS_MIN = 86_400 * (0 - 2_440_588);
const TO_TIMESTAMP_SECONDS_END = 86_400 * (109_203_528 - 2_440_588);

function makeInterval(args: readonly QValue[]): Interval {
  const [years = 0, months = 0, weeks = 0, days = 0, hours = 0, mins = 0] = args.slice(0, 6) as number[];
  const secs = (args[6] as number | undefined) ?? 0;
  const micros = BigInt(hours) * USECS_PER_HOUR + BigInt(mins) * USECS_PER_MINUTE + BigInt(rint(secs * 1e6));
  return checkInterval({ months: years * 12 + months, days: weeks * 7 + days, micros });
}

function constructorDefs(): FnDef[] {
  const defs: FnDef[] = [
    fn('make_date', [T.int4, T.int4, T.int4], T.date, ([y, m, d]) => makeDate(y as number, m as number, d as number)),
    fn('make_timestamp', [T.int4, T.int4, T.int4, T.int4, T.int4, T.float8], T.timestamp, makeTimestamp),
    fn('make_timestamptz', [T.int4, T.int4, T.int4, T.int4, T.int4, T.float8], T.timestamptz, makeTimestamp),
    fn('to_timestamp', [T.float8], T.timestamptz, ([s]) => toTimestamp(s as number)),
    fn('age', [T.timestamp, T.timestamp], T.interval, ([a, b]) => age(ts(a!), ts(b!))),
    fn('age', [T.timestamptz, T.timestamptz], T.interval, ([a, b]) => age(ts(a!), ts(b!))),
    fn('age', [T.timestamp], T.interval, ([a]) => age(BigInt(splitTimestamp(currentTimestampUs()).days) * USECS_PER_DAY, ts(a!)), true),
    fn('age', [T.timestamptz], T.interval, ([a]) => age(BigInt(splitTimestamp(currentTimestampUs()).days) * USECS_PER_DAY, ts(a!)), true),
    fn('justify_days', [T.interval], T.interval, ([a]) => justifyDays(iv(a!))),
    fn('justify_hours', [T.interval], T.interval, ([a]) => justifyHours(iv(a!))),
    fn('justify_interval', [T.interval], T.interval, ([a]) => justifyInterval(iv(a!))),
    fn('isfinite', [T.date], T.bool, ([a]) => isFiniteDate(a as number)),
    fn('isfinite', [T.timestamp], T.bool, ([a]) => isFiniteTimestamp(ts(a!))),
    fn('isfinite', [T.timestamptz], T.bool, ([a]) => isFiniteTimestamp(ts(a!))),
    fn('isfinite', [T.interval], T.bool, () => true),
    fn('to_char', [T.timestamp, T.text], T.text, ([a, f]) => toCharTimestamp(ts(a!), f as string, false)),
    fn('to_char', [T.timestamptz, T.text], T.text, ([a, f]) => toCharTimestamp(ts(a!), f as string, true)),
    fn('to_date', [T.text, T.text], T.date, ([a, f]) => toDate(a as string, f as string)),
    fn('to_timestamp', [T.text, T.text], T.timestamptz, ([a, f]) => toTimestampFromText(a as string, f as string)),
  ];
  const intervalParams: QType[] = [T.int4, T.int4, T.int4, T.int4, T.int4, T.int4, T.float8];
  for (let n = 0; n <= 7; n++) defs.push(fn('make_interval', intervalParams.slice(0, n), T.interval, makeInterval));
  return defs;
}

export const DATETIME_FN_DEFS: readonly FnDef[] = [...clockDefs(), ...fieldDefs(), ...constructorDefs()];
