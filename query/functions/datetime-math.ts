/** Calendar arithmetic on DATE, TIMESTAMP and INTERVAL values, as PostgreSQL computes it. */
import { isSvcError } from '../../core/errors.js';
import type { Interval } from '../types/contract.js';
import {
  checkTimestamp,
  civilFromDays,
  DATE_INFINITY,
  DATE_MINUS_INFINITY,
  daysFromCivil,
  daysInMonth,
  isFiniteDate,
  isFiniteTimestamp,
  splitTimestamp,
  timestampFromParts,
  checkDate,
} from '../types/datetime.js';
import { dataError, datetimeOutOfRange } from '../types/errors.js';
import { justifyHours } from '../types/interval.js';

/** timestamp + interval: months first (the day clamped to the month's end), then days, then time. */
export function timestampPlusInterval(ts: bigint, iv: Interval): bigint {
  if (!isFiniteTimestamp(ts)) return ts;
  let t = ts;
  if (iv.months !== 0) {
    const { days, timeUs } = splitTimestamp(t);
    const c = civilFromDays(days);
    const total = c.year * 12 + (c.month - 1) + iv.months;
    const year = Math.floor(total / 12);
    const month = total - year * 12 + 1;
    const day = Math.min(c.day, daysInMonth(year, month));
    t = timestampFromParts(daysFromCivil(year, month, day), timeUs);
  }
  if (iv.days !== 0) t += BigInt(iv.days) * 86_400_000_000n;
  t += iv.micros;
  try {
    return checkTimestamp(t);
  } catch (error) {
    if (!isSvcError(error)) throw error;
    throw datetimeOutOfRange('timestamp out of range');
  }
}

export function timestampMinusInterval(ts: bigint, iv: Interval): bigint {
  return timestampPlusInterval(ts, { months: -iv.months, days: -iv.days, micros: -iv.micros });
}

/** timestamp - timestamp: the difference as days and time (justify_hours). */
export function timestampDiff(a: bigint, b: bigint): Interval {
  if (!isFiniteTimestamp(a) || !isFiniteTimestamp(b)) throw dataError('cannot subtract infinite timestamps', '22008');
  return justifyHours({ months: 0, days: 0, micros: a - b });
}

export function datePlusDays(d: number, n: number): number {
  if (!isFiniteDate(d)) return d;
  const r = d + n;
  if (r === DATE_INFINITY || r === DATE_MINUS_INFINITY) throw datetimeOutOfRange('date out of range');
  return checkDate(r);
}

export function dateDiff(a: number, b: number): number {
  if (!isFiniteDate(a) || !isFiniteDate(b)) throw dataError('cannot subtract infinite dates', '22008');
  return a - b;
}
