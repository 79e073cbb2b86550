/**
 * The calendar under DATE (days since 1970-01-01) and TIMESTAMP (microseconds since 1970-01-01 00:00
 * UTC): PostgreSQL's ranges and infinities, proleptic Gregorian day arithmetic and the text output.
 * Text input (and the time zones it reads) is datetime.ts, which re-exports all of this.
 */
import { datetimeOutOfRange } from './errors.js';

export const USECS_PER_SEC = 1_000_000n;
export const USECS_PER_MINUTE = 60_000_000n;
export const USECS_PER_HOUR = 3_600_000_000n;
export const USECS_PER_DAY = 86_400_000_000n;

export const TIMESTAMP_INFINITY = 9223372036854775807n;
export const TIMESTAMP_MINUS_INFINITY = -9223372036854775808n;
export const DATE_INFINITY = 2147483647;
export const DATE_MINUS_INFINITY = -2147483648;

/** PostgreSQL's ranges: dates 4713-11-24 BC .. 5874897-12-31, timestamps 4713-11-24 BC .. 294276-12-31. */
const DATE_DAYS_MIN = -2440588; // 4714-11-24 (astronomical -4713) is Julian day 0
const DATE_DAYS_MAX = 2147483494 - 2440588; // PostgreSQL's DATE_END_JULIAN - epoch, exclusive
const TIMESTAMP_USECS_MIN = BigInt(DATE_DAYS_MIN) * USECS_PER_DAY;
const TIMESTAMP_USECS_END = BigInt(109203528 - 2440588) * USECS_PER_DAY; // TIMESTAMP_END_JULIAN = date2j(294277, 1, 1), exclusive

export function isFiniteTimestamp(v: bigint): boolean {
  return v !== TIMESTAMP_INFINITY && v !== TIMESTAMP_MINUS_INFINITY;
}

export function isFiniteDate(v: number): boolean {
  return v !== DATE_INFINITY && v !== DATE_MINUS_INFINITY;
}

export function isValidTimestamp(v: bigint): boolean {
  return !isFiniteTimestamp(v) || (v >= TIMESTAMP_USECS_MIN && v < TIMESTAMP_USECS_END);
}

export function isValidDate(v: number): boolean {
  return !isFiniteDate(v) || (v >= DATE_DAYS_MIN && v < DATE_DAYS_MAX);
}

export function checkTimestamp(v: bigint): bigint {
  if (!isValidTimestamp(v)) throw datetimeOutOfRange('timestamp out of range');
  return v;
}

export function checkDate(v: number): number {
  if (!isValidDate(v)) throw datetimeOutOfRange('date out of range');
  return v;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (astronomical year: 0 = 1 BC). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = month > 2 ? month - 3 : month + 9;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export interface Civil {
  year: number;
  month: number;
  day: number;
}

export function civilFromDays(days: number): Civil {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : MONTH_DAYS[month - 1]!;
}

/** Floor division of a timestamp into (days, microseconds of the day). */
export function splitTimestamp(ts: bigint): { days: number; timeUs: bigint } {
  let days = ts / USECS_PER_DAY;
  let timeUs = ts - days * USECS_PER_DAY;
  if (timeUs < 0n) {
    days -= 1n;
    timeUs += USECS_PER_DAY;
  }
  return { days: Number(days), timeUs };
}

export function timestampFromParts(days: number, timeUs: bigint): bigint {
  return BigInt(days) * USECS_PER_DAY + timeUs;
}

function pad(n: number, width: number): string {
  const s = String(n);
  return s.length >= width ? s : '0'.repeat(width - s.length) + s;
}

function formatYmd(c: Civil): { text: string; bc: boolean } {
  const bc = c.year <= 0;
  const y = bc ? 1 - c.year : c.year;
  return { text: `${pad(y, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}`, bc };
}

/** HH:MM:SS[.ffffff] with trailing fraction zeros dropped. */
export function formatTimeOfDay(timeUs: bigint): string {
  const totalSec = Number(timeUs / USECS_PER_SEC);
  const frac = Number(timeUs % USECS_PER_SEC);
  const h = Math.floor(totalSec / 3600);
  const m = Math.floor((totalSec % 3600) / 60);
  const s = totalSec % 60;
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${formatFraction(frac)}`;
}

/** '.123' for 123000 microseconds, '' for 0. */
export function formatFraction(micros: number): string {
  if (micros === 0) return '';
  return '.' + pad(micros, 6).replace(/0+$/, '');
}

export function formatDate(days: number): string {
  if (days === DATE_INFINITY) return 'infinity';
  if (days === DATE_MINUS_INFINITY) return '-infinity';
  const { text, bc } = formatYmd(civilFromDays(days));
  return bc ? `${text} BC` : text;
}

/** timestamp: 'YYYY-MM-DD HH:MM:SS[.ffffff]'; timestamptz adds '+00' (the session zone is UTC). */
export function formatTimestamp(ts: bigint, withZone: boolean): string {
  if (ts === TIMESTAMP_INFINITY) return 'infinity';
  if (ts === TIMESTAMP_MINUS_INFINITY) return '-infinity';
  const { days, timeUs } = splitTimestamp(ts);
  const { text, bc } = formatYmd(civilFromDays(days));
  return `${text} ${formatTimeOfDay(timeUs)}${withZone ? '+00' : ''}${bc ? ' BC' : ''}`;
}

/** ISO 8601 UTC with 'Z' for JSON: '2024-01-02T03:04:05.123456Z' (fraction only when non-zero). */
export function formatTimestampIso(ts: bigint): string {
  if (ts === TIMESTAMP_INFINITY) return 'infinity';
  if (ts === TIMESTAMP_MINUS_INFINITY) return '-infinity';
  const { days, timeUs } = splitTimestamp(ts);
  const c = civilFromDays(days);
  const year = c.year >= 0 && c.year <= 9999 ? pad(c.year, 4) : (c.year < 0 ? '-' : '+') + pad(Math.abs(c.year), 6);
  return `${year}-${pad(c.month, 2)}-${pad(c.day, 2)}T${formatTimeOfDay(timeUs)}Z`;
}
