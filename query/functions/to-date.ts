/**
 * to_date(text, format) and to_timestamp(text, format): the input read by a template, as
 * PostgreSQL's non-FX mode reads it, for the patterns people write: YYYY YY MM DD DDD Mon MON
 * mon Month MONTH month Dy Day (read and ignored) HH HH12 HH24 MI SS MS US AM PM, the FM prefix,
 * "quoted text" and separators (a separator or space in the template skips the separators at that
 * place of the input). Fields not given are PostgreSQL's defaults (year 1 BC, January, the 1st,
 * midnight). Other template patterns are refused as not supported rather than read wrongly.
 */
import { SvcError } from '../../core/errors.js';
import { daysFromCivil, daysInMonth, USECS_PER_DAY } from '../types/datetime.js';
import { dataError } from '../types/errors.js';

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

/** Numeric fields and their widths; longest names first, so HH24 wins over HH and YYYY over YY. */
const NUMBERS: [string, number][] = [
  ['YYYY', 4],
  ['HH24', 2],
  ['HH12', 2],
  ['DDD', 3],
  ['YY', 2],
  ['MM', 2],
  ['DD', 2],
  ['HH', 2],
  ['MI', 2],
  ['SS', 2],
  ['MS', 3],
  ['US', 6],
];
const WORDS = ['MONTH', 'MON', 'DAY', 'DY', 'AM', 'PM', 'A.M.', 'P.M.'];
/** Template patterns of to_char this reader does not take (IYYY, Q, WW, J, TZ, …): refused, not read as text. */
const OTHERS = [
  'IYYY',
  'IYY',
  'YYY',
  'IW',
  'ID',
  'WW',
  'CC',
  'TZH',
  'TZM',
  'TZ',
  'OF',
  'SSSSS',
  'SSSS',
  'RM',
  'BC',
  'AD',
  'B.C.',
  'A.D.',
  'Q',
  'J',
  'W',
  'D',
  'Y',
  'I',
];

interface Parsed {
  year: number;
  month: number;
  day: number;
  doy: number | null;
  hour: number;
  /** The hour was read by HH or HH12 (1-12; 12 is midnight unless PM). */
  twelve: boolean;
  pm: boolean | null;
  min: number;
  sec: number;
  us: number;
}

function isSeparator(c: string | undefined): boolean {
  return c !== undefined && !/[\p{L}\p{N}]/u.test(c);
}

function read(text: string, format: string): Parsed {
  // No year is year 0 (1 BC), as PostgreSQL's to_date('05', 'MM') gives 0001-05-01 BC.
  const p: Parsed = { year: 0, month: 1, day: 1, doy: null, hour: 0, twelve: false, pm: null, min: 0, sec: 0, us: 0 };
  let at = 0;
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c === '"') {
      const end = format.indexOf('"', i + 1);
      const literal = format.slice(i + 1, end < 0 ? format.length : end);
      at += literal.length; // quoted text skips as many input characters
      i = end < 0 ? format.length : end + 1;
      continue;
    }
    let j = i;
    if (format.slice(j, j + 2).toUpperCase() === 'FM') j += 2;
    const rest = format.slice(j).toUpperCase();
    const number = NUMBERS.find(([name]) => rest.startsWith(name));
    const word = number ? undefined : WORDS.find((w) => rest.startsWith(w));
    if (!number && !word && OTHERS.some((o) => rest.startsWith(o))) {
      throw new SvcError(
        'INVALID_QUERY',
        `template pattern "${format.slice(j, j + (OTHERS.find((o) => rest.startsWith(o)) ?? '').length)}" in to_date/to_timestamp is not supported`,
        {
          reason: 'unsupported',
        },
      );
    }
    if (number) {
      const [name, width] = number;
      while (text[at] === ' ') at++;
      const digits = /^\d*/.exec(text.slice(at, at + width))![0];
      if (digits.length === 0) {
        const shown = text.slice(at, at + width);
        throw dataError(`invalid value "${shown}" for "${format.slice(j, j + name.length)}"`, '22007', 'Value must be an integer.');
      }
      at += digits.length;
      set(p, name, Number(digits));
      i = j + name.length;
      continue;
    }
    if (word) {
      at = readWord(p, word, format.slice(j, j + word.length), text, at);
      i = j + word.length;
      continue;
    }
    // A separator or space in the template: the input's separators at this place.
    if (isSeparator(c)) {
      if (isSeparator(text[at])) at++;
      while (c === ' ' && text[at] === ' ') at++;
    } else at++;
    i++;
  }
  return p;
}

function set(p: Parsed, name: string, v: number): void {
  switch (name) {
    case 'YYYY':
      p.year = v;
      return;
    case 'YY':
      p.year = v < 70 ? 2000 + v : 1900 + v; // PostgreSQL's rule for two-digit years
      return;
    case 'MM':
      p.month = v;
      return;
    case 'DD':
      p.day = v;
      return;
    case 'DDD':
      p.doy = v;
      return;
    case 'MI':
      p.min = v;
      return;
    case 'SS':
      p.sec = v;
      return;
    case 'MS':
      p.us = v * 1000;
      return;
    case 'US':
      p.us = v;
      return;
    default:
      p.hour = v; // HH, HH12, HH24
      p.twelve = name !== 'HH24';
  }
}

function readWord(p: Parsed, word: string, written: string, text: string, at: number): number {
  const rest = text.slice(at).toLowerCase();
  const badValue = (): SvcError =>
    dataError(`invalid value "${text.slice(at, at + 9)}" for "${written}"`, '22007', 'The given value did not match any of the allowed values for this field.');
  if (word === 'MONTH' || word === 'MON') {
    const m = MONTHS.findIndex((name) => rest.startsWith(word === 'MON' ? name.slice(0, 3) : name));
    if (m < 0) throw badValue();
    p.month = m + 1;
    return at + (word === 'MON' ? 3 : MONTHS[m]!.length);
  }
  if (word === 'DAY' || word === 'DY') {
    const d = DAYS.findIndex((name) => rest.startsWith(word === 'DY' ? name.slice(0, 3) : name));
    if (d < 0) throw badValue();
    return at + (word === 'DY' ? 3 : DAYS[d]!.length);
  }
  const dotted = word.includes('.');
  const am = rest.startsWith(dotted ? 'a.m.' : 'am');
  if (!am && !rest.startsWith(dotted ? 'p.m.' : 'pm')) throw badValue();
  p.pm = !am;
  return at + word.length;
}

/** The date as days since 1970-01-01 (svcdb's dates), checked as PostgreSQL checks it. */
function dayNumber(p: Parsed, text: string): number {
  if (p.doy !== null) {
    if (p.doy < 1 || p.doy > (daysInMonth(p.year, 2) === 29 ? 366 : 365)) throw outOfRange(text);
    return daysFromCivil(p.year, 1, 1) + p.doy - 1;
  }
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.day > daysInMonth(p.year, p.month)) throw outOfRange(text);
  return daysFromCivil(p.year, p.month, p.day);
}

function outOfRange(text: string): SvcError {
  return dataError(`date/time field value out of range: "${text}"`, '22008');
}

/** to_date: a date (days since 1970-01-01). */
export function toDate(text: string, format: string): number {
  return dayNumber(read(text, format), text);
}

/** to_timestamp(text, format): a timestamptz (µs since the epoch; the session zone is UTC). */
export function toTimestampFromText(text: string, format: string): bigint {
  const p = read(text, format);
  let hour = p.hour;
  if (p.twelve || p.pm !== null) {
    if (hour < 1 || hour > 12)
      throw dataError(`hour "${hour}" is invalid for the 12-hour clock`, '22007', 'Use the 24-hour clock, or give an hour between 1 and 12.');
    hour = (hour % 12) + (p.pm ? 12 : 0);
  }
  if (hour > 24 || p.min > 59 || p.sec > 60) throw outOfRange(text);
  const days = dayNumber(p, text);
  return BigInt(days) * USECS_PER_DAY + BigInt(((hour * 60 + p.min) * 60 + p.sec) * 1e6 + p.us);
}
