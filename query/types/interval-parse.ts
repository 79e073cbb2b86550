/**
 * interval_in: INTERVAL text in PostgreSQL's 'postgres' format ('1 year 2 mons 3 days 04:05:06', '@ 1 day ago',
 * fractional units cascading as DecodeInterval does) and ISO 8601 ('P1Y2M3DT4H5M6S'). The arithmetic and the
 * output live in interval.ts.
 */
import type { Interval } from './contract.js';
import * as D from './decimal.js';
import { invalidInput } from './errors.js';
import { USECS_PER_HOUR, USECS_PER_MINUTE, USECS_PER_SEC } from './datetime.js';
import { checkInterval, DAYS_PER_MONTH, negInterval } from './interval.js';

type Unit = 'us' | 'ms' | 's' | 'min' | 'h' | 'd' | 'w' | 'mon' | 'y' | 'decade' | 'century' | 'millennium';
const UNITS: Record<string, Unit> = {
  microsecond: 'us',
  microseconds: 'us',
  microsecon: 'us',
  us: 'us',
  usec: 'us',
  usecs: 'us',
  useconds: 'us',
  millisecond: 'ms',
  milliseconds: 'ms',
  millisecon: 'ms',
  ms: 'ms',
  msec: 'ms',
  msecs: 'ms',
  mseconds: 'ms',
  second: 's',
  seconds: 's',
  sec: 's',
  secs: 's',
  s: 's',
  minute: 'min',
  minutes: 'min',
  min: 'min',
  mins: 'min',
  m: 'min',
  hour: 'h',
  hours: 'h',
  hr: 'h',
  hrs: 'h',
  h: 'h',
  day: 'd',
  days: 'd',
  d: 'd',
  week: 'w',
  weeks: 'w',
  w: 'w',
  month: 'mon',
  months: 'mon',
  mon: 'mon',
  mons: 'mon',
  year: 'y',
  years: 'y',
  yr: 'y',
  yrs: 'y',
  y: 'y',
  decade: 'decade',
  decades: 'decade',
  dec: 'decade',
  decs: 'decade',
  century: 'century',
  centuries: 'century',
  cent: 'century',
  c: 'century',
  millennium: 'millennium',
  millennia: 'millennium',
  mil: 'millennium',
  mils: 'millennium',
};

const TIME_UNIT_US: Partial<Record<Unit, bigint>> = {
  us: 1n,
  ms: 1000n,
  s: USECS_PER_SEC,
  min: USECS_PER_MINUTE,
  h: USECS_PER_HOUR,
};
const YEAR_UNITS: Partial<Record<Unit, number>> = { y: 1, decade: 10, century: 100, millennium: 1000 };

/** Mutable accumulator while parsing. */
interface Acc {
  months: number;
  days: number;
  micros: bigint;
}

/** Each unit may appear once ('1 day 1 day' is invalid); a HH:MM:SS field claims hours, minutes and seconds. */
function claim(seen: Set<string>, fields: readonly string[], fail: () => Error): void {
  for (const f of fields) {
    if (seen.has(f)) throw fail();
    seen.add(f);
  }
}

/** Adds `value` (decimal text) of `unit`, cascading fractions as PostgreSQL's DecodeInterval does. */
function addUnit(acc: Acc, valueText: string, unit: Unit, fail: () => Error): void {
  const d = D.parseDecimal(valueText);
  if (d === null) throw fail();
  const us = TIME_UNIT_US[unit];
  if (us !== undefined) {
    acc.micros += D.roundTo(D.mul(d, D.dec(us)), 0).coef;
    return;
  }
  const whole = Number(D.truncTo(d, 0).coef);
  const frac = D.toNumber(D.sub(d, D.truncTo(d, 0)));
  const years = YEAR_UNITS[unit];
  if (years !== undefined) {
    acc.months += whole * years * 12 + Math.round(frac * years * 12);
    return;
  }
  if (unit === 'mon') {
    acc.months += whole;
    addFractionalDays(acc, frac * DAYS_PER_MONTH);
  } else if (unit === 'w') {
    acc.days += whole * 7;
    addFractionalDays(acc, frac * 7);
  } else {
    acc.days += whole;
    addFractionalDays(acc, frac);
  }
}

function addFractionalDays(acc: Acc, fracDays: number): void {
  if (fracDays === 0) return;
  const whole = Math.trunc(fracDays);
  acc.days += whole;
  acc.micros += BigInt(Math.round((fracDays - whole) * 86400 * 1e6));
}

const TIME_FIELD_RE = /^([+-])?(\d+):(\d+)(?::(\d+(?:\.\d*)?))?$/;
const NUMBER_UNIT_RE = /^([+-]?(?:\d+\.?\d*|\.\d+))([a-z]*)$/;

/** interval_in (postgres and ISO 8601 formats; '@', 'ago', fractional units, HH:MM:SS fields). */
export function parseInterval(text: string): Interval {
  const fail = (): Error => invalidInput('interval', text);
  let s = text.trim().toLowerCase();
  if (s.startsWith('p')) return parseIsoInterval(s, fail);
  if (s.startsWith('@')) s = s.slice(1).trim();
  if (s.length === 0) throw fail();
  const tokens = s.split(/\s+/);
  const acc: Acc = { months: 0, days: 0, micros: 0n };
  const seen = new Set<string>();
  let ago = false;
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok === 'ago' && i === tokens.length - 1) {
      ago = true;
      continue;
    }
    const tf = TIME_FIELD_RE.exec(tok);
    if (tf) {
      const us =
        BigInt(tf[2]!) * USECS_PER_HOUR +
        BigInt(tf[3]!) * USECS_PER_MINUTE +
        (tf[4] === undefined ? 0n : D.roundTo(D.mul(D.parseDecimal(tf[4])!, D.dec(USECS_PER_SEC)), 0).coef);
      acc.micros += tf[1] === '-' ? -us : us;
      claim(seen, ['h', 'min', 's'], fail);
      continue;
    }
    const nu = NUMBER_UNIT_RE.exec(tok);
    if (!nu) throw fail();
    let unitWord = nu[2]!;
    if (unitWord === '') {
      const next = tokens[i + 1];
      if (next !== undefined && UNITS[next] !== undefined) {
        unitWord = next;
        i++;
      } else {
        claim(seen, ['s'], fail);
        addUnit(acc, nu[1]!, 's', fail);
        continue;
      } // a bare number is seconds
    }
    const unit = UNITS[unitWord];
    if (unit === undefined) throw fail();
    claim(seen, [unit], fail);
    addUnit(acc, nu[1]!, unit, fail);
  }
  const v = checkInterval({ months: acc.months, days: acc.days, micros: acc.micros });
  return ago ? negInterval(v) : v;
}

const ISO_RE =
  /^p(?:([+-]?\d+(?:\.\d+)?)y)?(?:([+-]?\d+(?:\.\d+)?)m)?(?:([+-]?\d+(?:\.\d+)?)w)?(?:([+-]?\d+(?:\.\d+)?)d)?(?:t(?:([+-]?\d+(?:\.\d+)?)h)?(?:([+-]?\d+(?:\.\d+)?)m)?(?:([+-]?\d+(?:\.\d+)?)s)?)?$/;

function parseIsoInterval(s: string, fail: () => Error): Interval {
  const m = ISO_RE.exec(s);
  if (!m || s === 'p' || s.endsWith('t')) throw fail();
  const acc: Acc = { months: 0, days: 0, micros: 0n };
  const units: Unit[] = ['y', 'mon', 'w', 'd', 'h', 'min', 's'];
  units.forEach((u, i) => {
    if (m[i + 1] !== undefined) addUnit(acc, m[i + 1]!, u, fail);
  });
  return checkInterval(acc);
}
