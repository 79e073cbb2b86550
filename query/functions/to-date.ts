/**
 * to_date(text, format) and to_timestamp(text, format): the input read by a template as
 * PostgreSQL's DCH_from_char reads it (formatting.c), for the patterns people write: YYYY YY MM DD
 * DDD Mon MON mon Month MONTH month Dy Day (read and ignored) HH HH12 HH24 MI SS MS US FF1-FF6 AM
 * PM A.M. P.M., the FM prefix, FX, "quoted text" and separators. The template is cut into nodes by
 * to-date-template.ts, which refuses the patterns this reader does not take.
 *
 * PostgreSQL's rules, kept here: a numeric field reads every digit there is when it has FM or the
 * next template node is not a digit field or a digit (so '12345-01-01' with YYYY-MM-DD is year
 * 12345), else exactly its width; MS, US and FFn are fractions of a second ('.5' is half a second);
 * outside FX mode, spaces before a field are skipped and a template separator matches one input
 * separator or none; reading stops when the input ends (the fields not read keep their defaults:
 * year 1 BC, January, the 1st, midnight; a month or day of 0 is the default too).
 */
import { SvcError } from '../../core/errors.js';
import { daysFromCivil, daysInMonth, USECS_PER_DAY } from '../types/datetime.js';
import { isFiniteDate, isFiniteTimestamp, isValidDate, isValidTimestamp } from '../types/datetime-calendar.js';
import { dataError, datetimeOutOfRange as outOfRangeOf } from '../types/errors.js';
import { isSeparatorChar, isSpaceChar, parseTemplate, type NumberNode, type TemplateNode } from './to-date-template.js';

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const INT_MAX = 2147483647;

/** The fields read, as PostgreSQL's TmFromChar: 0 is "not given". */
interface Parsed {
  year: number;
  month: number;
  day: number;
  doy: number;
  hour: number;
  /** HH, HH12, AM or PM was read: a 12-hour clock (1-12; 12 is midnight unless PM). */
  twelve: boolean;
  pm: number;
  min: number;
  sec: number;
  ms: number;
  us: number;
  /** FFn: the timestamp is rounded to n fractional digits. */
  ff: number;
}
type Field = 'year' | 'month' | 'day' | 'doy' | 'hour' | 'pm' | 'min' | 'sec' | 'ms' | 'us';

/** PostgreSQL's from_char_set_int: a field given twice must say the same thing. */
function setField(p: Parsed, field: Field, v: number, written: string): void {
  if (p[field] !== 0 && p[field] !== v)
    throw dataError(
      `conflicting values for "${written}" field in formatting string`,
      '22007',
      'This value contradicts a previous setting for the same field type.',
    );
  p[field] = v;
}

/** Whether the node after `n` lets a numeric field read every digit (PostgreSQL's is_next_separator). */
function nextIsSeparator(nodes: TemplateNode[], n: number): boolean {
  const next = nodes[n + 1];
  if (next === undefined) return true; // the end of the template is a separator
  if (next.kind === 'number') return false;
  if (next.kind === 'word' || next.kind === 'fx') return true;
  return !/^[0-9]$/.test(next.text);
}

/**
 * Reads one numeric field at `at` (PostgreSQL's from_char_parse_int_len): the value and the
 * number of characters it took (sign and digits, spaces before it not counted).
 */
function readNumber(text: string, at: number, node: NumberNode, slurp: boolean): [value: number, end: number, used: number] {
  let start = at;
  while (isSpaceChar(text[start])) start++;
  const width = node.width;
  let m: RegExpExecArray | null;
  if (slurp) {
    m = /^[+-]?[0-9]+/.exec(text.slice(start));
  } else {
    const copy = text.slice(start, start + width);
    if (copy.length < width)
      throw dataError(
        `source string too short for "${node.written}" formatting field`,
        '22007',
        `Field requires ${width} characters, but only ${copy.length} remain.`,
      );
    m = /^[+-]?[0-9]+/.exec(copy);
    if (m && m[0].length < width)
      throw dataError(`invalid value "${copy}" for "${node.written}"`, '22007', `Field requires ${width} characters, but only ${m[0].length} could be parsed.`);
  }
  if (!m) throw dataError(`invalid value "${text.slice(start, start + width)}" for "${node.written}"`, '22007', 'Value must be an integer.');
  const value = Number(m[0]);
  if (value > INT_MAX || value < -INT_MAX - 1)
    throw dataError(`value for "${node.written}" in source string is out of range`, '22008', `Value must be in the range ${-INT_MAX - 1} to ${INT_MAX}.`);
  return [value, start + m[0].length, m[0].length];
}

/** PostgreSQL's adjust_partial_year_to_2020, for YY. */
function twoDigitYear(y: number): number {
  if (y < 70) return y + 2000;
  if (y < 100) return y + 1900;
  if (y < 520) return y + 2000;
  if (y < 1000) return y + 1000;
  return y;
}

/** A fraction read with `used` characters, scaled to `digits` digits ('5' of MS is 500). */
function fraction(v: number, used: number, digits: number): number {
  return used >= digits ? v : v * 10 ** (digits - used);
}

function setNumber(p: Parsed, node: NumberNode, v: number, used: number): void {
  const w = node.written;
  switch (node.key) {
    case 'YYYY':
      return setField(p, 'year', v, w);
    case 'YY':
      setField(p, 'year', v, w);
      p.year = twoDigitYear(v);
      return;
    case 'MM':
      return setField(p, 'month', v, w);
    case 'DD':
      return setField(p, 'day', v, w);
    case 'DDD':
      return setField(p, 'doy', v, w);
    case 'MI':
      return setField(p, 'min', v, w);
    case 'SS':
      return setField(p, 'sec', v, w);
    case 'MS':
      return setField(p, 'ms', fraction(v, used, 3), w);
    case 'US':
      return setField(p, 'us', fraction(v, used, 6), w);
    case 'HH24':
      return setField(p, 'hour', v, w);
    case 'HH':
    case 'HH12':
      p.twelve = true;
      return setField(p, 'hour', v, w);
    default: // FF1-FF6: microseconds, and the precision the timestamp is rounded to
      p.ff = node.width;
      return setField(p, 'us', fraction(v, used, 6), w);
  }
}

function read(text: string, format: string): Parsed {
  const nodes = parseTemplate(format);
  const p: Parsed = { year: 0, month: 0, day: 0, doy: 0, hour: 0, twelve: false, pm: 0, min: 0, sec: 0, ms: 0, us: 0, ff: 0 };
  let fx = false;
  let at = 0;
  // Spaces skipped before fields that the template did not ask for: a later literal character of
  // the template then takes one of them instead of an input character (PostgreSQL's extra_skip).
  let extraSkip = 0;
  for (let n = 0; n < nodes.length && at < text.length; n++) {
    const node = nodes[n]!;
    // Outside FX mode, spaces before a field or a separator are skipped (PostgreSQL 18 reads
    // '2024 -03-05' with YYYY-MM-DD as March, so a run of spaces and one separator is one separator).
    const skipsSpaces = node.kind === 'number' || node.kind === 'word' || node.kind === 'separator' || node.kind === 'space' || n === 0;
    if (!fx && node.kind !== 'fx' && skipsSpaces) {
      while (isSpaceChar(text[at])) {
        at++;
        extraSkip++;
      }
    }
    if (node.kind === 'separator' || node.kind === 'space') {
      if (fx) at += text.codePointAt(at)! > 0xffff ? 2 : 1;
      else {
        extraSkip--;
        if (isSpaceChar(text[at]) || isSeparatorChar(text[at])) {
          at++;
          extraSkip++;
        }
      }
    } else if (node.kind === 'char') {
      // A literal takes one input character, whatever it is.
      if (!fx && extraSkip > 0) extraSkip--;
      else at += text.codePointAt(at)! > 0xffff ? 2 : 1;
    } else if (node.kind === 'fx') fx = true;
    else if (node.kind === 'number') {
      const [value, end, used] = readNumber(text, at, node, node.fm || nextIsSeparator(nodes, n));
      setNumber(p, node, value, used);
      at = end;
    } else if (node.kind === 'word') at = readWord(p, node.key, node.written, text, at);
  }
  return p;
}

function readWord(p: Parsed, word: string, written: string, text: string, at: number): number {
  const rest = text.slice(at).toLowerCase();
  const badValue = (): SvcError =>
    // PostgreSQL shows the input from there up to the next space.
    dataError(
      `invalid value "${/^[^ \t\n\r\f]*/.exec(text.slice(at))![0]}" for "${written}"`,
      '22007',
      'The given value did not match any of the allowed values for this field.',
    );
  if (word === 'MONTH' || word === 'MON') {
    const m = MONTHS.findIndex((name) => rest.startsWith(word === 'MON' ? name.slice(0, 3) : name));
    if (m < 0) throw badValue();
    setField(p, 'month', m + 1, written);
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
  setField(p, 'pm', am ? 0 : 1, written); // as PostgreSQL: AM is 0, so AM then PM is no conflict
  p.twelve = true;
  return at + word.length;
}

/** Cumulative days before each month, in a common and in a leap year (PostgreSQL's ysum). */
const YSUM = [
  [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365],
  [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366],
];

/**
 * The fields read turned into a date (days since 1970-01-01) and a time of day (µs), checked as
 * PostgreSQL's do_to_timestamp checks them; to_date checks the time too, as PostgreSQL does.
 */
function resolve(text: string, format: string): [days: number, usecs: number] {
  const p = read(text, format);
  let hour = p.hour;
  if (p.twelve) {
    if (hour < 1 || hour > 12)
      throw dataError(`hour "${hour}" is invalid for the 12-hour clock`, '22007', 'Use the 24-hour clock, or give an hour between 1 and 12.');
    if (p.pm === 1 && hour < 12) hour += 12;
    else if (p.pm !== 1 && hour === 12) hour = 0;
  }
  // No year is year 0 (1 BC), as PostgreSQL's to_date('05', 'MM') gives 0001-05-01 BC; a
  // negative year is that year BC (-44 is 44 BC, year -43 counted astronomically).
  const year = p.year < 0 ? p.year + 1 : p.year;
  let month = p.month === 0 ? 1 : p.month;
  let day = p.day === 0 ? 1 : p.day;
  if (p.doy !== 0 && (month <= 1 || day <= 1)) {
    // The day of the year fills the month and the day that were not given.
    if (year === 0) throw dataError('cannot calculate day of year without year information', '22007');
    const ysum = YSUM[daysInMonth(year, 2) === 29 ? 1 : 0]!;
    let m = 1;
    while (m <= 12 && p.doy > ysum[m]!) m++;
    if (month <= 1) month = m;
    if (day <= 1) day = p.doy - ysum[m - 1]!;
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) throw outOfRange(text);
  const fsec = p.ms * 1000 + p.us;
  if (hour < 0 || hour >= 24 || p.min < 0 || p.min >= 60 || p.sec < 0 || p.sec >= 60 || fsec < 0 || fsec >= 1e6) throw outOfRange(text);
  let usecs = ((hour * 60 + p.min) * 60 + p.sec) * 1e6 + fsec;
  if (p.ff > 0 && p.ff < 6) usecs = roundFraction(daysFromCivil(year, month, day), usecs, p.ff);
  return [daysFromCivil(year, month, day), usecs];
}

/** µs from 1970 to PostgreSQL's epoch, 2000-01-01: PostgreSQL rounds its own timestamps. */
const PG_EPOCH_USECS = 946_684_800_000_000n;

/**
 * FFn rounds the timestamp to n fractional digits as PostgreSQL's AdjustTimestampForTypmod does:
 * half away from zero on PostgreSQL's timestamp (µs since 2000), so before 2000 a half rounds down.
 */
function roundFraction(days: number, usecs: number, digits: number): number {
  const scale = 10n ** BigInt(6 - digits);
  const half = scale / 2n;
  const t = BigInt(days) * USECS_PER_DAY + BigInt(usecs) - PG_EPOCH_USECS;
  const rounded = t >= 0n ? ((t + half) / scale) * scale : -(((-t + half) / scale) * scale);
  return Number(rounded + PG_EPOCH_USECS - BigInt(days) * USECS_PER_DAY);
}

function outOfRange(text: string): SvcError {
  return dataError(`date/time field value out of range: "${text}"`, '22008');
}

/** to_date: a date (days since 1970-01-01), in PostgreSQL's range (4714-11-24 BC to 5874897-12-31). */
export function toDate(text: string, format: string): number {
  const days = resolve(text, format)[0];
  if (!isValidDate(days) || !isFiniteDate(days)) throw outOfRangeOf(`date out of range: "${text}"`);
  return days;
}

/** to_timestamp(text, format): a timestamptz (µs since the epoch; the session zone is UTC). */
export function toTimestampFromText(text: string, format: string): bigint {
  const [days, usecs] = resolve(text, format);
  const ts = BigInt(days) * USECS_PER_DAY + BigInt(usecs);
  if (!isValidTimestamp(ts) || !isFiniteTimestamp(ts)) throw outOfRangeOf('timestamp out of range');
  return ts;
}
