/**
 * INTERVAL: PostgreSQL's three independent fields { months, days, micros }. Comparison and hashing
 * use PostgreSQL's normalisation (1 month = 30 days, 1 day = 24 hours), so '1 mon' = '30 days'.
 * Text output is the 'postgres' IntervalStyle: '1 year 2 mons 3 days 04:05:06' (text input: interval-parse.ts).
 */
import type { Interval } from './contract.js';
import { dataError, datetimeOutOfRange } from './errors.js';
import { USECS_PER_DAY, USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC, formatFraction } from './datetime.js';

export type { Interval };

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -9223372036854775808n;
const INT64_MAX = 9223372036854775807n;
export const DAYS_PER_MONTH = 30;
const MONTHS_PER_YEAR = 12;

export const ZERO_INTERVAL: Interval = { months: 0, days: 0, micros: 0n };

export function interval(months: number, days: number, micros: bigint): Interval {
  return checkInterval({ months, days, micros });
}

/** Refuses fields beyond PostgreSQL's int32/int64 storage ('interval out of range'). */
export function checkInterval(v: Interval): Interval {
  if (
    !Number.isInteger(v.months) ||
    v.months < INT32_MIN ||
    v.months > INT32_MAX ||
    !Number.isInteger(v.days) ||
    v.days < INT32_MIN ||
    v.days > INT32_MAX ||
    v.micros < INT64_MIN ||
    v.micros > INT64_MAX
  ) {
    throw datetimeOutOfRange('interval out of range');
  }
  return v;
}

/** The comparison value of PostgreSQL's interval_cmp_value: months*30 days + days, in microseconds. */
export function intervalTotalUs(v: Interval): bigint {
  return (BigInt(v.months) * BigInt(DAYS_PER_MONTH) + BigInt(v.days)) * USECS_PER_DAY + v.micros;
}

export function compareInterval(a: Interval, b: Interval): number {
  const x = intervalTotalUs(a),
    y = intervalTotalUs(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function addInterval(a: Interval, b: Interval): Interval {
  return checkInterval({ months: a.months + b.months, days: a.days + b.days, micros: a.micros + b.micros });
}

export function negInterval(a: Interval): Interval {
  return checkInterval({ months: -a.months, days: -a.days, micros: -a.micros });
}

export function subInterval(a: Interval, b: Interval): Interval {
  return addInterval(a, negInterval(b));
}

/** PostgreSQL's TSROUND: round to microsecond precision (rint, half to even). */
function tsRound(x: number): number {
  const v = x * 1e6;
  const r = Math.round(v);
  return (Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r) / 1e6;
}

function rint(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * interval_mul / interval_div: months and days scaled and truncated, their fractions cascading
 * down (1 month = 30 days, 1 day = 86400 s), as PostgreSQL does it in double precision.
 */
function scaleInterval(span: Interval, apply: (x: number) => number): Interval {
  const monthD = apply(span.months);
  const dayD = apply(span.days);
  if (!Number.isFinite(monthD) || !Number.isFinite(dayD) || monthD < INT32_MIN || monthD > INT32_MAX || dayD < INT32_MIN || dayD > INT32_MAX) {
    throw datetimeOutOfRange('interval out of range');
  }
  const months = Math.trunc(monthD);
  let days = Math.trunc(dayD);
  const monthRemainderDays = tsRound((monthD - months) * DAYS_PER_MONTH);
  let secRemainder = tsRound((dayD - days + monthRemainderDays - Math.trunc(monthRemainderDays)) * 86400);
  if (Math.abs(secRemainder) >= 86400) {
    days += Math.trunc(secRemainder / 86400);
    secRemainder -= Math.trunc(secRemainder / 86400) * 86400;
  }
  days += Math.trunc(monthRemainderDays);
  const timeD = rint(apply(Number(span.micros)) + secRemainder * 1e6);
  if (!Number.isFinite(timeD) || timeD < -9.223372036854776e18 || timeD >= 9.223372036854776e18) throw datetimeOutOfRange('interval out of range');
  return checkInterval({ months, days, micros: BigInt(timeD) });
}

export function mulInterval(span: Interval, factor: number): Interval {
  if (Number.isNaN(factor)) throw datetimeOutOfRange('interval out of range');
  return scaleInterval(span, (x) => x * factor);
}

export function divInterval(span: Interval, factor: number): Interval {
  if (factor === 0) throw dataError('division by zero', '22012');
  if (Number.isNaN(factor)) throw datetimeOutOfRange('interval out of range');
  return scaleInterval(span, (x) => x / factor);
}

/** justify_hours: whole days out of the time field, signs made consistent. */
export function justifyHours(v: Interval): Interval {
  let days = v.days + Number(v.micros / USECS_PER_DAY);
  let micros = v.micros % USECS_PER_DAY;
  if (days > 0 && micros < 0n) {
    micros += USECS_PER_DAY;
    days--;
  } else if (days < 0 && micros > 0n) {
    micros -= USECS_PER_DAY;
    days++;
  }
  return checkInterval({ months: v.months, days, micros });
}

/** justify_days: whole 30-day months out of the day field. */
export function justifyDays(v: Interval): Interval {
  let months = v.months + Math.trunc(v.days / DAYS_PER_MONTH);
  let days = v.days % DAYS_PER_MONTH;
  if (months > 0 && days < 0) {
    days += DAYS_PER_MONTH;
    months--;
  } else if (months < 0 && days > 0) {
    days -= DAYS_PER_MONTH;
    months++;
  }
  return checkInterval({ months, days: days + 0, micros: v.micros });
}

/** justify_interval: both, with one sign across all fields. */
export function justifyInterval(v: Interval): Interval {
  let months = v.months;
  let days = v.days;
  let micros = v.micros;
  days += Number(micros / USECS_PER_DAY);
  micros %= USECS_PER_DAY;
  months += Math.trunc(days / DAYS_PER_MONTH);
  days %= DAYS_PER_MONTH;
  if (months > 0 && (days < 0 || (days === 0 && micros < 0n))) {
    days += DAYS_PER_MONTH;
    months--;
  } else if (months < 0 && (days > 0 || (days === 0 && micros > 0n))) {
    days -= DAYS_PER_MONTH;
    months++;
  }
  if (days > 0 && micros < 0n) {
    micros += USECS_PER_DAY;
    days--;
  } else if (days < 0 && micros > 0n) {
    micros -= USECS_PER_DAY;
    days++;
  }
  return checkInterval({ months, days: days + 0, micros });
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** PostgreSQL's 'postgres' IntervalStyle output. */
export function formatInterval(v: Interval): string {
  const parts: string[] = [];
  let isBefore = false;
  let isZero = true;
  const addPart = (value: number, unit: string): void => {
    if (value === 0) return;
    parts.push(`${isBefore && value > 0 ? '+' : ''}${plural(value, unit)}`);
    isBefore = value < 0;
    isZero = false;
  };
  const year = Math.trunc(v.months / MONTHS_PER_YEAR);
  const mon = v.months - year * MONTHS_PER_YEAR;
  addPart(year, 'year');
  addPart(mon, 'mon');
  addPart(v.days, 'day');
  if (isZero || v.micros !== 0n) {
    const minus = v.micros < 0n;
    const abs = minus ? -v.micros : v.micros;
    const hour = abs / USECS_PER_HOUR;
    const min = Number((abs % USECS_PER_HOUR) / USECS_PER_MINUTE);
    const sec = Number((abs % USECS_PER_MINUTE) / USECS_PER_SEC);
    const frac = Number(abs % USECS_PER_SEC);
    const sign = minus ? '-' : isBefore ? '+' : '';
    const hh = hour < 10n ? `0${hour}` : String(hour);
    parts.push(`${sign}${hh}:${String(min).padStart(2, '0')}:${String(sec).padStart(2, '0')}${formatFraction(frac)}`);
  }
  return parts.join(' ');
}

/** ISO 8601 duration, for JSON where asked: 'P1Y2M3DT4H5M6S'. */
export function formatIntervalIso(v: Interval): string {
  const year = Math.trunc(v.months / 12),
    mon = v.months % 12;
  const neg = v.micros < 0n;
  const abs = neg ? -v.micros : v.micros;
  const h = abs / USECS_PER_HOUR,
    m = (abs % USECS_PER_HOUR) / USECS_PER_MINUTE,
    s = (abs % USECS_PER_MINUTE) / USECS_PER_SEC;
  const f = formatFraction(Number(abs % USECS_PER_SEC));
  const sg = neg ? '-' : '';
  let out = 'P';
  if (year) out += `${year}Y`;
  if (mon) out += `${mon}M`;
  if (v.days) out += `${v.days}D`;
  if (abs !== 0n) {
    out += 'T';
    if (h) out += `${sg}${h}H`;
    if (m) out += `${sg}${m}M`;
    if (s || f) out += `${sg}${s}${f}S`;
  }
  return out === 'P' ? 'PT0S' : out;
}
