/**
 * to_char(timestamp|timestamptz|date, format) for the common template patterns: YYYY YYY YY Y
 * IYYY MM Mon MON mon Month MONTH month DD DDD D ID Day DAY day Dy DY dy HH HH12 HH24 MI SS MS US
 * AM PM am pm A.M. P.M. Q WW IW CC J TZ tz OF, the FM prefix, "quoted text" and backslash escapes.
 * Names are English and blank-padded to 9 characters unless FM is given, as PostgreSQL does.
 */
import { civilFromDays, daysFromCivil, splitTimestamp, TIMESTAMP_INFINITY, TIMESTAMP_MINUS_INFINITY } from '../types/datetime.js';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  min: number;
  sec: number;
  us: number;
  days: number;
}

function fields(ts: bigint): Fields {
  const { days, timeUs } = splitTimestamp(ts);
  const c = civilFromDays(days);
  const t = Number(timeUs);
  const sec = Math.floor(t / 1e6);
  return { year: c.year, month: c.month, day: c.day, hour: Math.floor(sec / 3600), min: Math.floor((sec % 3600) / 60), sec: sec % 60, us: t % 1e6, days };
}

function isoWeekInfo(days: number): { isoYear: number; week: number; isoDow: number } {
  const dow = ((days % 7) + 7 + 4) % 7 || 7; // 1970-01-01 was a Thursday
  const thursday = days + (4 - dow);
  const y = civilFromDays(thursday).year;
  return { isoYear: y, week: Math.floor((thursday - daysFromCivil(y, 1, 1)) / 7) + 1, isoDow: dow };
}

function caseLike(word: string, pattern: string): string {
  if (pattern === pattern.toUpperCase()) return word.toUpperCase();
  if (pattern === pattern.toLowerCase()) return word.toLowerCase();
  return word;
}

type Render = (f: Fields, fm: boolean, pattern: string, withZone: boolean) => string;

const num =
  (v: number, width: number) =>
  (f: Fields, fm: boolean): string => {
    void f;
    const s = String(Math.abs(v));
    return (v < 0 ? '-' : '') + (fm ? s : s.padStart(width, '0'));
  };

/** Longest patterns first so 'HH24' wins over 'HH' and 'MONTH' over 'MON'. */
const PATTERNS: [string, Render][] = [
  ['YYYY', (f, fm) => num(f.year > 0 ? f.year : 1 - f.year, 4)(f, fm)],
  ['IYYY', (f, fm) => num(isoWeekInfo(f.days).isoYear, 4)(f, fm)],
  ['HH24', (f, fm) => num(f.hour, 2)(f, fm)],
  ['HH12', (f, fm) => num(f.hour % 12 === 0 ? 12 : f.hour % 12, 2)(f, fm)],
  [
    'MONTH',
    (f, fm, p) => {
      const w = caseLike(MONTHS[f.month - 1]!, p);
      return fm ? w : w.padEnd(9);
    },
  ],
  ['A.M.', (f, _fm, p) => caseLike(f.hour < 12 ? 'A.M.' : 'P.M.', p)],
  ['P.M.', (f, _fm, p) => caseLike(f.hour < 12 ? 'A.M.' : 'P.M.', p)],
  ['YYY', (f, fm) => num((f.year > 0 ? f.year : 1 - f.year) % 1000, 3)(f, fm)],
  ['DDD', (f, fm) => num(f.days - daysFromCivil(f.year, 1, 1) + 1, 3)(f, fm)],
  [
    'DAY',
    (f, fm, p) => {
      const w = caseLike(DAYS[((f.days % 7) + 11) % 7]!, p);
      return fm ? w : w.padEnd(9);
    },
  ],
  ['MON', (f, _fm, p) => caseLike(MONTHS[f.month - 1]!.slice(0, 3), p)],
  ['YY', (f, fm) => num((f.year > 0 ? f.year : 1 - f.year) % 100, 2)(f, fm)],
  ['MM', (f, fm) => num(f.month, 2)(f, fm)],
  ['DD', (f, fm) => num(f.day, 2)(f, fm)],
  ['DY', (f, _fm, p) => caseLike(DAYS[((f.days % 7) + 11) % 7]!.slice(0, 3), p)],
  ['ID', (f, fm) => num(isoWeekInfo(f.days).isoDow, 1)(f, fm)],
  ['IW', (f, fm) => num(isoWeekInfo(f.days).week, 2)(f, fm)],
  ['WW', (f, fm) => num(Math.floor((f.days - daysFromCivil(f.year, 1, 1)) / 7) + 1, 2)(f, fm)],
  ['HH', (f, fm) => num(f.hour % 12 === 0 ? 12 : f.hour % 12, 2)(f, fm)],
  ['MI', (f, fm) => num(f.min, 2)(f, fm)],
  ['SS', (f, fm) => num(f.sec, 2)(f, fm)],
  ['MS', (f, fm) => num(Math.floor(f.us / 1000), 3)(f, fm)],
  ['US', (f, fm) => num(f.us, 6)(f, fm)],
  ['AM', (f, _fm, p) => caseLike(f.hour < 12 ? 'AM' : 'PM', p)],
  ['PM', (f, _fm, p) => caseLike(f.hour < 12 ? 'AM' : 'PM', p)],
  ['CC', (f, fm) => num(f.year > 0 ? Math.floor((f.year + 99) / 100) : -Math.floor((100 - f.year) / 100), 2)(f, fm)],
  ['TZ', (_f, _fm, p, z) => (z ? caseLike('UTC', p) : '')],
  ['OF', (_f, _fm, _p, z) => (z ? '+00' : '')],
  ['Y', (f, fm) => num((f.year > 0 ? f.year : 1 - f.year) % 10, 1)(f, fm)],
  ['Q', (f, fm) => num(Math.floor((f.month - 1) / 3) + 1, 1)(f, fm)],
  ['D', (f, fm) => num((((f.days % 7) + 11) % 7) + 1, 1)(f, fm)],
  ['J', (f, fm) => num(f.days + 2440588, 1)(f, fm)],
];

/** to_char on a timestamp (µs since the epoch, UTC). */
export function toCharTimestamp(ts: bigint, format: string, withZone: boolean): string | null {
  if (ts === TIMESTAMP_INFINITY || ts === TIMESTAMP_MINUS_INFINITY) return null;
  const f = fields(ts);
  let out = '';
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c === '"') {
      const end = format.indexOf('"', i + 1);
      out += format.slice(i + 1, end < 0 ? format.length : end).replace(/\\(.)/g, '$1');
      i = end < 0 ? format.length : end + 1;
      continue;
    }
    if (c === '\\' && i + 1 < format.length) {
      out += format[i + 1];
      i += 2;
      continue;
    }
    let fm = false;
    let j = i;
    if (format.slice(j, j + 2).toUpperCase() === 'FM') {
      fm = true;
      j += 2;
    }
    const rest = format.slice(j);
    const hit = PATTERNS.find(([p]) => rest.toUpperCase().startsWith(p));
    if (hit === undefined) {
      out += c;
      i++;
      continue;
    }
    const [p, render] = hit;
    out += render(f, fm, rest.slice(0, p.length), withZone);
    i = j + p.length;
  }
  return out;
}
