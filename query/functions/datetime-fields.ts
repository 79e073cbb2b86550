/**
 * Date/time fields: date_trunc, extract (numeric, PostgreSQL 14+) and date_part (float8), age.
 * Years are astronomical internally; extract(year) gives -1 for 1 BC as PostgreSQL does.
 */
import type { Interval } from '../types/contract.js';
import * as D from '../types/decimal.js';
import {
  civilFromDays,
  daysFromCivil,
  daysInMonth,
  isFiniteTimestamp,
  splitTimestamp,
  timestampFromParts,
  TIMESTAMP_INFINITY,
  USECS_PER_DAY,
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  USECS_PER_SEC,
} from '../types/datetime.js';
import { dataError } from '../types/errors.js';
import { checkInterval } from '../types/interval.js';
import * as N from '../types/numeric.js';

export type TsKind = 'timestamp' | 'timestamptz' | 'date' | 'interval';
const TYPE_NAMES: Record<TsKind, string> = {
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  date: 'date',
  interval: 'interval',
};

const ALIASES: Record<string, string> = {
  microsecond: 'microseconds',
  microseconds: 'microseconds',
  us: 'microseconds',
  usec: 'microseconds',
  usecs: 'microseconds',
  millisecond: 'milliseconds',
  milliseconds: 'milliseconds',
  ms: 'milliseconds',
  msec: 'milliseconds',
  msecs: 'milliseconds',
  second: 'second',
  seconds: 'second',
  sec: 'second',
  secs: 'second',
  s: 'second',
  minute: 'minute',
  minutes: 'minute',
  min: 'minute',
  mins: 'minute',
  m: 'minute',
  hour: 'hour',
  hours: 'hour',
  h: 'hour',
  hr: 'hour',
  hrs: 'hour',
  day: 'day',
  days: 'day',
  d: 'day',
  week: 'week',
  weeks: 'week',
  w: 'week',
  month: 'month',
  months: 'month',
  mon: 'month',
  mons: 'month',
  quarter: 'quarter',
  qtr: 'quarter',
  year: 'year',
  years: 'year',
  y: 'year',
  yr: 'year',
  yrs: 'year',
  decade: 'decade',
  decades: 'decade',
  century: 'century',
  centuries: 'century',
  millennium: 'millennium',
  millennia: 'millennium',
  mil: 'millennium',
  dow: 'dow',
  isodow: 'isodow',
  doy: 'doy',
  epoch: 'epoch',
  isoyear: 'isoyear',
  julian: 'julian',
  timezone: 'timezone',
  timezone_hour: 'timezone_hour',
  timezone_minute: 'timezone_minute',
};

function unit(field: string, kind: TsKind): string {
  const u = ALIASES[field.toLowerCase()];
  if (u === undefined) throw dataError(`unit "${field.toLowerCase()}" not recognized for type ${TYPE_NAMES[kind]}`, '22023');
  return u;
}

function unsupported(u: string, kind: TsKind): Error {
  return dataError(`unit "${u}" not supported for type ${TYPE_NAMES[kind]}`, '0A000');
}

/** ISO 8601 week-numbering year and week of a day. */
function isoWeek(days: number): { isoYear: number; week: number } {
  const dow = isoDow(days); // 1..7
  const thursday = days + (4 - dow);
  const y = civilFromDays(thursday).year;
  const jan1 = daysFromCivil(y, 1, 1);
  return { isoYear: y, week: Math.floor((thursday - jan1) / 7) + 1 };
}

function isoDow(days: number): number {
  const dow = ((days % 7) + 7 + 4) % 7; // 1970-01-01 was a Thursday (4)
  return dow === 0 ? 7 : dow;
}

// PostgreSQL's formulas on the astronomical year (C integer division truncates).
const div = (a: number, b: number): number => Math.trunc(a / b);

function centuryOf(y: number): number {
  return y > 0 ? div(y + 99, 100) : -div(99 - (y - 1), 100);
}

function millenniumOf(y: number): number {
  return y > 0 ? div(y + 999, 1000) : -div(999 - (y - 1), 1000);
}

function decadeOf(y: number): number {
  return y >= 0 ? div(y, 10) : -div(8 - (y - 1), 10);
}

/** extract(field from timestamp/date) as an exact numeric text. */
export function extractTimestamp(field: string, ts: bigint, kind: TsKind): string {
  const u = unit(field, kind);
  if (!isFiniteTimestamp(ts)) {
    if (['epoch', 'year', 'isoyear', 'decade', 'century', 'millennium', 'julian'].includes(u)) return ts === TIMESTAMP_INFINITY ? 'Infinity' : '-Infinity';
    return null as unknown as string;
  }
  const { days, timeUs } = splitTimestamp(ts);
  const c = civilFromDays(days);
  const yearOut = c.year > 0 ? c.year : c.year - 1;
  const secUs = timeUs % USECS_PER_MINUTE;
  const isDate = kind === 'date';
  switch (u) {
    case 'microseconds':
      if (isDate) throw unsupported(u, kind);
      return secUs.toString();
    case 'milliseconds':
      if (isDate) throw unsupported(u, kind);
      return D.formatDecimal({ coef: secUs, scale: 3 }).replace(/^(-?\d+\.\d{3})\d*$/, '$1');
    case 'second':
      if (isDate) throw unsupported(u, kind);
      return D.formatDecimal({ coef: secUs, scale: 6 });
    case 'minute':
      if (isDate) throw unsupported(u, kind);
      return String(Number((timeUs % USECS_PER_HOUR) / USECS_PER_MINUTE));
    case 'hour':
      if (isDate) throw unsupported(u, kind);
      return String(Number(timeUs / USECS_PER_HOUR));
    case 'day':
      return String(c.day);
    case 'month':
      return String(c.month);
    case 'quarter':
      return String(Math.floor((c.month - 1) / 3) + 1);
    case 'year':
      return String(yearOut);
    case 'decade':
      return String(decadeOf(c.year));
    case 'century':
      return String(centuryOf(c.year));
    case 'millennium':
      return String(millenniumOf(c.year));
    case 'dow':
      return String(isoDow(days) % 7);
    case 'isodow':
      return String(isoDow(days));
    case 'doy':
      return String(days - daysFromCivil(c.year, 1, 1) + 1);
    case 'week':
      return String(isoWeek(days).week);
    case 'isoyear': {
      const y = isoWeek(days).isoYear;
      return String(y > 0 ? y : y - 1);
    }
    case 'epoch':
      return isDate ? (BigInt(days) * 86400n).toString() : D.formatDecimal({ coef: ts, scale: 6 });
    case 'julian': {
      const jd = BigInt(days + 2440588);
      if (isDate) return jd.toString();
      return N.numericAdd(jd.toString(), N.numericDiv(timeUs.toString(), USECS_PER_DAY.toString()));
    }
    case 'timezone':
    case 'timezone_hour':
    case 'timezone_minute':
      if (kind !== 'timestamptz') throw unsupported(u, kind);
      return '0';
    default:
      throw unsupported(u, kind);
  }
}

/** extract(field from interval). */
export function extractInterval(field: string, iv: Interval): string {
  const u = unit(field, 'interval');
  const years = Math.trunc(iv.months / 12);
  const months = iv.months % 12;
  const secUs = iv.micros % USECS_PER_MINUTE;
  switch (u) {
    case 'microseconds':
      return secUs.toString();
    case 'milliseconds':
      return D.formatDecimal({ coef: secUs, scale: 3 }).replace(/^(-?\d+\.\d{3})\d*$/, '$1');
    case 'second':
      return D.formatDecimal({ coef: secUs, scale: 6 });
    case 'minute':
      return String(Number((iv.micros % USECS_PER_HOUR) / USECS_PER_MINUTE));
    case 'hour':
      return (iv.micros / USECS_PER_HOUR).toString();
    case 'day':
      return String(iv.days);
    case 'month':
      return String(months);
    case 'quarter':
      return String(iv.months >= 0 ? Math.trunc(months / 3) + 1 : -(Math.trunc(-months / 3) + 1));
    case 'year':
      return String(years);
    case 'decade':
      return String(Math.trunc(years / 10));
    case 'century':
      return String(Math.trunc(years / 100));
    case 'millennium':
      return String(Math.trunc(years / 1000));
    case 'epoch': {
      // 365.25 days per year, 30 per month, as PostgreSQL counts them.
      const quarterDays = BigInt(years) * 1461n + BigInt(months) * 120n + BigInt(iv.days) * 4n;
      const us = quarterDays * (USECS_PER_DAY / 4n) + iv.micros;
      return D.formatDecimal({ coef: us, scale: 6 });
    }
    default:
      throw unsupported(u, 'interval');
  }
}

/** date_trunc on a timestamp's fields. */
export function truncTimestamp(field: string, ts: bigint, kind: TsKind): bigint {
  const u = unit(field, kind);
  if (!isFiniteTimestamp(ts)) return ts;
  const { days, timeUs } = splitTimestamp(ts);
  const c = civilFromDays(days);
  const at = (y: number, m: number, d: number): bigint => timestampFromParts(daysFromCivil(y, m, d), 0n);
  switch (u) {
    case 'microseconds':
      return ts;
    case 'milliseconds':
      return timestampFromParts(days, timeUs - (timeUs % 1000n));
    case 'second':
      return timestampFromParts(days, timeUs - (timeUs % USECS_PER_SEC));
    case 'minute':
      return timestampFromParts(days, timeUs - (timeUs % USECS_PER_MINUTE));
    case 'hour':
      return timestampFromParts(days, timeUs - (timeUs % USECS_PER_HOUR));
    case 'day':
      return timestampFromParts(days, 0n);
    case 'week':
      return timestampFromParts(days - (isoDow(days) - 1), 0n);
    case 'month':
      return at(c.year, c.month, 1);
    case 'quarter':
      return at(c.year, Math.floor((c.month - 1) / 3) * 3 + 1, 1);
    case 'year':
      return at(c.year, 1, 1);
    case 'decade':
      return at(c.year > 0 ? div(c.year, 10) * 10 : -div(8 - (c.year - 1), 10) * 10, 1, 1);
    case 'century':
      return at(c.year > 0 ? div(c.year + 99, 100) * 100 - 99 : -div(99 - (c.year - 1), 100) * 100 + 1, 1, 1);
    case 'millennium':
      return at(c.year > 0 ? div(c.year + 999, 1000) * 1000 - 999 : -div(999 - (c.year - 1), 1000) * 1000 + 1, 1, 1);
    default:
      throw unsupported(u, kind);
  }
}

/** date_trunc on an interval's fields. */
export function truncInterval(field: string, iv: Interval): Interval {
  const u = unit(field, 'interval');
  const years = Math.trunc(iv.months / 12);
  const t = iv.micros;
  switch (u) {
    case 'microseconds':
      return iv;
    case 'milliseconds':
      return { ...iv, micros: t - (t % 1000n) };
    case 'second':
      return { ...iv, micros: t - (t % USECS_PER_SEC) };
    case 'minute':
      return { ...iv, micros: t - (t % USECS_PER_MINUTE) };
    case 'hour':
      return { ...iv, micros: t - (t % USECS_PER_HOUR) };
    case 'day':
      return { ...iv, micros: 0n };
    case 'month':
      return { months: iv.months, days: 0, micros: 0n };
    case 'quarter':
      return { months: years * 12 + Math.trunc((iv.months % 12) / 3) * 3, days: 0, micros: 0n };
    case 'year':
      return { months: years * 12, days: 0, micros: 0n };
    case 'decade':
      return { months: Math.trunc(years / 10) * 120, days: 0, micros: 0n };
    case 'century':
      return { months: Math.trunc(years / 100) * 1200, days: 0, micros: 0n };
    case 'millennium':
      return { months: Math.trunc(years / 1000) * 12000, days: 0, micros: 0n };
    default:
      throw dataError(`unit "${u}" not supported for type interval`, '0A000');
  }
}

interface Tm {
  year: number;
  mon: number;
  mday: number;
  hour: number;
  min: number;
  sec: number;
  fsec: number;
}

function toTm(ts: bigint): Tm {
  const { days, timeUs } = splitTimestamp(ts);
  const c = civilFromDays(days);
  const totalSec = Number(timeUs / USECS_PER_SEC);
  return {
    year: c.year,
    mon: c.month,
    mday: c.day,
    hour: Math.floor(totalSec / 3600),
    min: Math.floor((totalSec % 3600) / 60),
    sec: totalSec % 60,
    fsec: Number(timeUs % USECS_PER_SEC),
  };
}

/** age(a, b): a symbolic years/months/days difference (PostgreSQL's timestamp_age). */
export function age(a: bigint, b: bigint): Interval {
  if (!isFiniteTimestamp(a) || !isFiniteTimestamp(b)) throw dataError('cannot compute age of infinite timestamps', '22008');
  const t1 = toTm(a),
    t2 = toTm(b);
  const neg = a < b;
  const s = neg ? -1 : 1;
  let fsec = s * (t1.fsec - t2.fsec),
    sec = s * (t1.sec - t2.sec),
    min = s * (t1.min - t2.min),
    hour = s * (t1.hour - t2.hour);
  let mday = s * (t1.mday - t2.mday),
    mon = s * (t1.mon - t2.mon),
    year = s * (t1.year - t2.year);
  while (fsec < 0) {
    fsec += 1_000_000;
    sec--;
  }
  while (sec < 0) {
    sec += 60;
    min--;
  }
  while (min < 0) {
    min += 60;
    hour--;
  }
  while (hour < 0) {
    hour += 24;
    mday--;
  }
  while (mday < 0) {
    const ref = neg ? t1 : t2;
    mday += daysInMonth(ref.year, ref.mon);
    mon--;
  }
  while (mon < 0) {
    mon += 12;
    year--;
  }
  if (neg) {
    fsec = -fsec;
    sec = -sec;
    min = -min;
    hour = -hour;
    mday = -mday;
    mon = -mon;
    year = -year;
  }
  const micros = BigInt(hour) * USECS_PER_HOUR + BigInt(min) * USECS_PER_MINUTE + BigInt(sec) * USECS_PER_SEC + BigInt(fsec);
  return checkInterval({ months: year * 12 + mon, days: mday, micros });
}
