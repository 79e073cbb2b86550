/**
 * DATE (days since 1970-01-01, a number) and TIMESTAMP [WITH TIME ZONE] (microseconds since
 * 1970-01-01 00:00 UTC, a bigint): calendar arithmetic, text input and output.
 * The session time zone is UTC, always: TIMESTAMPTZ prints with '+00' and a TIMESTAMP without
 * zone is read as UTC when converted. Years before 1 AD print with ' BC' (year 0 is 1 BC).
 * +-infinity are the extreme values of the representation, as in PostgreSQL.
 */
import { dataError, datetimeOutOfRange, invalidInput } from './errors.js';
import { ZONE_CACHE_ENTRIES_MAX } from './limits.js';

import {
  DATE_INFINITY,
  DATE_MINUS_INFINITY,
  TIMESTAMP_INFINITY,
  TIMESTAMP_MINUS_INFINITY,
  USECS_PER_DAY,
  USECS_PER_HOUR,
  USECS_PER_MINUTE,
  USECS_PER_SEC,
  daysFromCivil,
  daysInMonth,
  isFiniteDate,
  isFiniteTimestamp,
  isValidDate,
  isValidTimestamp,
  splitTimestamp,
  timestampFromParts,
} from './datetime-calendar.js';

export * from './datetime-calendar.js';

export type DateTimeKind = 'date' | 'timestamp' | 'timestamptz';

const KIND_NAMES: Record<DateTimeKind, string> = {
  date: 'date',
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
};

/** The moment a statement started is the caller's; 'now' and friends read the wall clock here. */
function nowUs(): bigint {
  return BigInt(Date.now()) * 1000n;
}

const DATE_RE = /^(\d{1,7})-(\d{1,2})-(\d{1,2})|^(\d{4})(\d{2})(\d{2})(?=$|[T ])|^(\d{1,7})\/(\d{1,2})\/(\d{1,2})/;
const TIME_RE = /^(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?/;
const ZONE_RE = /^(?:(z|utc|gmt|zulu)|([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?)$/i;

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MDY_RE = /^(\d{1,2})\/(\d{1,2})\/(\d{1,7})/;
const NAME_DAY_YEAR_RE = /^(?:[a-z]{3,9},?\s+)?([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{1,7})/i;
const DAY_NAME_YEAR_RE = /^(\d{1,2})[\s-]+([a-z]{3,9})\.?[\s-]+(\d{1,7})/i;

function monthNumber(name: string): number {
  const n = name.toLowerCase();
  const i = MONTH_NAMES.indexOf(n.slice(0, 3));
  const full = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'][i];
  return i >= 0 && (n.length === 3 || full!.startsWith(n) || n === 'sept') ? i + 1 : 0;
}

/**
 * The date part of a literal: ISO 'YYYY-MM-DD', 'YYYYMMDD', 'YYYY/MM/DD', 'MM/DD/YYYY' (DateStyle
 * MDY), 'Jan 5, 2024', '5 January 2024', '05-Jan-2024'. `length` is the text consumed.
 */
function readDate(s: string): { year: number; month: number; day: number; length: number } | null {
  const mdy = MDY_RE.exec(s);
  if (mdy && mdy[3]!.length >= 3) return { year: Number(mdy[3]), month: Number(mdy[1]), day: Number(mdy[2]), length: mdy[0].length };
  const ndy = NAME_DAY_YEAR_RE.exec(s);
  if (ndy && monthNumber(ndy[1]!) > 0) return { year: Number(ndy[3]), month: monthNumber(ndy[1]!), day: Number(ndy[2]), length: ndy[0].length };
  const dny = DAY_NAME_YEAR_RE.exec(s);
  if (dny && monthNumber(dny[2]!) > 0) return { year: Number(dny[3]), month: monthNumber(dny[2]!), day: Number(dny[1]), length: dny[0].length };
  const dm = DATE_RE.exec(s);
  if (!dm) return null;
  return { year: Number(dm[1] ?? dm[4] ?? dm[7]), month: Number(dm[2] ?? dm[5] ?? dm[8]), day: Number(dm[3] ?? dm[6] ?? dm[9]), length: dm[0].length };
}

/** Parsed pieces of a date/time literal. */
interface Parsed {
  days: number;
  timeUs: bigint;
  offsetSec: number | null;
}

function parseFields(text: string, kind: DateTimeKind): Parsed {
  const bad = (): Error => invalidInput(KIND_NAMES[kind], text);
  let s = text.trim();
  let bc = false;
  const era = /\s*\b(bc|ad)$/i.exec(s);
  if (era) {
    bc = era[1]!.toLowerCase() === 'bc';
    s = s.slice(0, era.index).trimEnd();
  }
  const ymd = readDate(s);
  if (ymd === null) throw bad();
  const { year, month, day } = ymd;
  s = s.slice(ymd.length);
  if (year === 0 && bc) throw bad();
  // PostgreSQL reads the whole literal before it checks field ranges: '2024-02-30x' is a syntax error.
  const dateOutOfRange = month < 1 || month > 12 || day < 1 || day > daysInMonth(bc ? 1 - year : year, month);
  let days = dateOutOfRange ? 0 : daysFromCivil(bc ? 1 - year : year, month, day);
  let timeUs = 0n;
  let offsetSec: number | null = null;
  s = s.replace(/^(?:T|\s+T?\s*)/i, '');
  const tm = TIME_RE.exec(s);
  if (tm) {
    const h = Number(tm[1]),
      mi = Number(tm[2]),
      sec = Number(tm[3] ?? 0);
    const fracDigits = tm[4] ?? '';
    let fracUs = Number((fracDigits + '000000').slice(0, 6));
    if (fracDigits.length > 6 && Number(fracDigits[6]) >= 5) fracUs++;
    if (mi > 59 || sec > 60 || h > 24 || (h === 24 && (mi > 0 || sec > 0 || fracUs > 0))) {
      throw dataError(`date/time field value out of range: "${text}"`, '22008');
    }
    timeUs = BigInt(h) * USECS_PER_HOUR + BigInt(mi) * USECS_PER_MINUTE + BigInt(sec) * USECS_PER_SEC + BigInt(fracUs);
    s = s.slice(tm[0].length).trim();
  }
  let zoneName: string | null = null;
  if (s.length > 0) {
    const zm = ZONE_RE.exec(s);
    if (!zm) {
      if (!ZONE_NAME_RE.test(s)) throw bad();
      if (zoneFormatter(s) === null) {
        // A bare unknown word is not a zone at all for PostgreSQL; 'Area/Name' is an unknown zone.
        if (!s.includes('/')) throw bad();
        throw dataError(`time zone "${s.toLowerCase()}" not recognized`, '22023');
      }
      zoneName = s;
    } else if (zm[1] !== undefined) offsetSec = 0;
    else {
      const hh = Number(zm[3]),
        mm = Number(zm[4] ?? 0),
        ss = Number(zm[5] ?? 0);
      if (hh > 15 || mm > 59 || ss > 59) throw dataError(`time zone displacement out of range: "${text}"`, '22009');
      offsetSec = (zm[2] === '-' ? -1 : 1) * (hh * 3600 + mm * 60 + ss);
    }
  }
  if (dateOutOfRange) throw dataError(`date/time field value out of range: "${text}"`, '22008');
  if (timeUs >= USECS_PER_DAY) {
    days += 1;
    timeUs -= USECS_PER_DAY;
  }
  if (zoneName !== null) offsetSec = namedZoneOffsetSec(zoneName, days, timeUs);
  return { days, timeUs, offsetSec };
}

const ZONE_NAME_RE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
/** Formatters per IANA zone name (null: unknown zone); bounded like any cache. */
const ZONE_FORMATTERS = new Map<string, Intl.DateTimeFormat | null>();

function zoneFormatter(name: string): Intl.DateTimeFormat | null {
  let f = ZONE_FORMATTERS.get(name);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: name,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      });
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      f = null; // not a time zone Intl knows
    }
    if (ZONE_FORMATTERS.size >= ZONE_CACHE_ENTRIES_MAX) ZONE_FORMATTERS.clear();
    ZONE_FORMATTERS.set(name, f);
  }
  return f;
}

/** The zone's UTC offset (seconds east) at a UTC instant. */
function offsetAt(f: Intl.DateTimeFormat, utcMs: number): number {
  const parts: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(utcMs))) parts[p.type] = p.value;
  let year = Number(parts.year);
  if (parts.era === 'BC' || parts.era === 'B') year = 1 - year;
  const local =
    daysFromCivil(year, Number(parts.month), Number(parts.day)) * 86_400_000 +
    (Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second)) * 1000;
  return Math.round((local - Math.floor(utcMs / 1000) * 1000) / 1000);
}

/**
 * Offset of a named zone for a local wall-clock time, resolved as PostgreSQL does around DST
 * changes: an ambiguous time is the later instant (standard time); a time in the spring-forward
 * gap uses the offset in effect before the change.
 */
function namedZoneOffsetSec(name: string, days: number, timeUs: bigint): number {
  const f = zoneFormatter(name)!;
  const localMs = days * 86_400_000 + Number(timeUs / 1000n);
  const before = offsetAt(f, localMs - 86_400_000);
  const after = offsetAt(f, localMs + 86_400_000);
  const validBefore = offsetAt(f, localMs - before * 1000) === before;
  const validAfter = offsetAt(f, localMs - after * 1000) === after;
  if (validBefore && validAfter) return Math.min(before, after);
  if (validAfter) return after;
  return before;
}

/** 'epoch', 'infinity', 'now', 'today'...: the value, or null when `s` is no special word. */
function specialValue(s: string, kind: DateTimeKind): bigint | null {
  const today = (): bigint => splitTimestampDays(nowUs());
  switch (s.trim().toLowerCase()) {
    case 'epoch':
      return 0n;
    case 'infinity':
    case '+infinity':
      return TIMESTAMP_INFINITY;
    case '-infinity':
      return TIMESTAMP_MINUS_INFINITY;
    case 'now':
      return kind === 'date' ? today() : nowUs();
    case 'today':
      return today();
    case 'tomorrow':
      return today() + USECS_PER_DAY;
    case 'yesterday':
      return today() - USECS_PER_DAY;
    default:
      return null;
  }
}

function splitTimestampDays(ts: bigint): bigint {
  return BigInt(splitTimestamp(ts).days) * USECS_PER_DAY;
}

/** timestamp_in / timestamptz_in: ISO 8601 or 'YYYY-MM-DD HH:MM:SS[.f][zone]'. A zone is ignored by timestamp. */
export function parseTimestamp(text: string, withZone: boolean): bigint {
  const kind = withZone ? 'timestamptz' : 'timestamp';
  const sp = specialValue(text, kind);
  if (sp !== null) return sp;
  const p = parseFields(text, kind);
  let ts = timestampFromParts(p.days, p.timeUs);
  if (withZone && p.offsetSec !== null) ts -= BigInt(p.offsetSec) * USECS_PER_SEC;
  if (!isValidTimestamp(ts) || !isFiniteTimestamp(ts)) throw datetimeOutOfRange(`timestamp out of range: "${text}"`);
  return ts;
}

/** date_in: a date, or a timestamp whose time is dropped. */
export function parseDate(text: string): number {
  const sp = specialValue(text, 'date');
  if (sp !== null) {
    if (sp === TIMESTAMP_INFINITY) return DATE_INFINITY;
    if (sp === TIMESTAMP_MINUS_INFINITY) return DATE_MINUS_INFINITY;
    return splitTimestamp(sp).days;
  }
  const p = parseFields(text, 'date');
  if (!isValidDate(p.days) || !isFiniteDate(p.days)) throw datetimeOutOfRange(`date out of range: "${text}"`);
  return p.days;
}

export function dateToTimestamp(days: number): bigint {
  if (days === DATE_INFINITY) return TIMESTAMP_INFINITY;
  if (days === DATE_MINUS_INFINITY) return TIMESTAMP_MINUS_INFINITY;
  const ts = BigInt(days) * USECS_PER_DAY;
  // PostgreSQL's date2timestamp names the date: dates reach 5874897, timestamps 294276.
  if (!isValidTimestamp(ts)) throw datetimeOutOfRange('date out of range for timestamp');
  return ts;
}

export function timestampToDate(ts: bigint): number {
  if (ts === TIMESTAMP_INFINITY) return DATE_INFINITY;
  if (ts === TIMESTAMP_MINUS_INFINITY) return DATE_MINUS_INFINITY;
  return splitTimestamp(ts).days;
}

/** The wall clock in microseconds since the epoch (now() and friends). */
export function currentTimestampUs(): bigint {
  return nowUs();
}

/**
 * The UTC offset (seconds east) of a time zone as AT TIME ZONE names it: 'UTC', an IANA name, or a
 * POSIX-style numeric offset ('+05' is five hours WEST of Greenwich, as in PostgreSQL). `at` is
 * either a UTC instant or a local wall-clock time (resolved around DST changes like timestamptz input).
 */
export function zoneOffsetSec(zone: string, at: { readonly utcUs: bigint } | { readonly localUs: bigint }): number {
  const z = zone.trim();
  const posix = /^([+-]?)(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?$/.exec(z);
  if (posix) {
    const seconds = Number(posix[2]) * 3600 + Number(posix[3] ?? 0) * 60 + Number(posix[4] ?? 0);
    return posix[1] === '-' ? seconds : -seconds;
  }
  if (/^(utc|gmt|z|zulu|ut)$/i.test(z)) return 0;
  const f = ZONE_NAME_RE.test(z) ? zoneFormatter(z) : null;
  if (f === null) throw dataError(`time zone "${z}" not recognized`, '22023');
  if ('utcUs' in at) return offsetAt(f, Number(at.utcUs / 1000n));
  const { days, timeUs } = splitTimestamp(at.localUs);
  return namedZoneOffsetSec(z, days, timeUs);
}
