/**
 * to_char(number, format) for integers and numeric, with PostgreSQL's template patterns 9 0 . D
 * , G S MI SG, the FM prefix and "quoted text" (PG's NUM_processor, as it prints): digits are
 * right-aligned on the decimal point and rounded half away from zero; a 9 not reached by the
 * number is a blank (nothing with FM), a 0 a zero, and every position right of the leftmost 0 is
 * a digit; a group separator before the number starts is a blank; a number too wide for the
 * template prints # in every digit position. Without S, MI or SG a sign column comes first, its
 * '-' (or blank) moved right next to the number. FM also drops the fraction's trailing zeros in 9
 * positions (and a number that then prints no digit at all shows one 0: '0.'). S floats: it is
 * printed right before the number, or right after it when written after it. PR, PL, L, RN, TH, V,
 * EEEE, B, C and SP are refused as not supported, inside words too.
 */
import { SvcError } from '../../core/errors.js';

type Token =
  | { readonly kind: 'digit'; readonly zero: boolean }
  | { readonly kind: 'point' | 'group' }
  | { readonly kind: 'sign'; readonly style: 'S' | 'MI' | 'SG' | 'implicit' }
  | { readonly kind: 'text'; readonly text: string };

/**
 * PostgreSQL's other number template patterns: refused, never printed as text. B and C (and SP)
 * are in the list because PostgreSQL takes them as patterns even inside words ('999 sec').
 */
const UNSUPPORTED = ['EEEE', 'PR', 'PL', 'RN', 'TH', 'SP', 'L', 'V', 'B', 'C'];

function tokenize(format: string): { tokens: Token[]; fm: boolean } {
  const tokens: Token[] = [];
  let fm = false;
  let i = 0;
  while (i < format.length) {
    const rest = format.slice(i).toUpperCase();
    const c = format[i]!;
    if (rest.startsWith('FM')) {
      fm = true;
      i += 2;
    } else if (c === '"') {
      const end = format.indexOf('"', i + 1);
      tokens.push({ kind: 'text', text: format.slice(i + 1, end < 0 ? format.length : end) });
      i = end < 0 ? format.length : end + 1;
    } else if (c === '9' || c === '0') {
      tokens.push({ kind: 'digit', zero: c === '0' });
      i++;
    } else if (c === '.' || rest[0] === 'D') {
      tokens.push({ kind: 'point' });
      i++;
    } else if (c === ',' || rest[0] === 'G') {
      tokens.push({ kind: 'group' });
      i++;
    } else if (rest.startsWith('MI') || rest.startsWith('SG')) {
      tokens.push({ kind: 'sign', style: rest.startsWith('MI') ? 'MI' : 'SG' });
      i += 2;
    } else if (rest[0] === 'S' && !rest.startsWith('SP')) {
      tokens.push({ kind: 'sign', style: 'S' });
      i++;
    } else {
      const refused = UNSUPPORTED.find((u) => rest.startsWith(u));
      if (refused)
        throw new SvcError('INVALID_QUERY', `to_char of a number with "${format.slice(i, i + refused.length)}" is not supported`, { reason: 'unsupported' });
      tokens.push({ kind: 'text', text: c });
      i++;
    }
  }
  if (tokens.filter((t) => t.kind === 'point').length > 1) throw new SvcError('INVALID_QUERY', 'multiple decimal points', { sqlstate: '42601' });
  // Without a sign pattern, a sign column stands before the first digit or point (a template
  // with neither has none: to_char(42, '') is empty, as in PostgreSQL).
  const first = tokens.findIndex((t) => t.kind === 'digit' || t.kind === 'point');
  if (first >= 0 && !tokens.some((t) => t.kind === 'sign')) tokens.splice(first, 0, { kind: 'sign', style: 'implicit' });
  return { tokens, fm };
}

/**
 * `text` (an integer or numeric's text) formatted by `format`; NaN and Infinity are refused.
 * `floatDigits` (to_char of float8: 15, float4: 6, C's DBL_DIG and FLT_DIG): PostgreSQL's
 * float8_to_char prints the value with C's printf to at most that many significant digits, so
 * fraction positions past them print nothing (no point when none is left), and the sign is the
 * printed text's (-0.001 to two places is '-.00').
 */
export function toCharNumber(text: string, format: string, floatDigits?: number): string {
  const { tokens, fm } = tokenize(format);
  const pointAt = tokens.findIndex((t) => t.kind === 'point');
  const digitsBefore = tokens.filter((t, i) => t.kind === 'digit' && (pointAt < 0 || i < pointAt)).length;
  const fracCount = pointAt < 0 ? 0 : tokens.filter((t, i) => t.kind === 'digit' && i > pointAt).length;
  let printed = fracCount; // fraction positions that print a digit
  if (floatDigits !== undefined) {
    const value = Number(text);
    if (!Number.isFinite(value)) throw new SvcError('INVALID_QUERY', `to_char of ${text.replace(/^[-+]/, '')} is not supported`, { reason: 'unsupported' });
    const intLength = printfFixed(Math.abs(value), 0).length;
    printed = intLength >= floatDigits ? 0 : Math.min(fracCount, floatDigits - intLength);
    text = printfFixed(value, printed);
  }
  if (!/^[-+]?\d*\.?\d*$/.test(text)) {
    throw new SvcError('INVALID_QUERY', `to_char of ${text.replace(/^[-+]/, '')} is not supported`, { reason: 'unsupported' });
  }
  // The magnitude rounded to fracCount places, half away from zero, as an integer of fraction units.
  const [whole = '', frac = ''] = text.replace(/^[-+]/, '').split('.');
  const kept = BigInt((whole || '0') + frac.padEnd(fracCount, '0').slice(0, fracCount));
  const units = frac.length > fracCount && frac[fracCount]! >= '5' ? kept + 1n : kept;
  const all = units.toString().padStart(fracCount + 1, '0');
  let intDigits = all.slice(0, all.length - fracCount).replace(/^0+/, '');
  const fracDigits = all.slice(all.length - fracCount);
  // A zero integer part still takes a position: with none ('.99') every number overflows (' .##').
  const overflow = Math.max(intDigits.length, 1) > digitsBefore;
  // The sign is the rounded value's: -0.001 to two places prints no minus (a float's: its printed text's).
  const negative = text.startsWith('-') && (units !== 0n || floatDigits !== undefined);
  // An integer part of zero shows as 0 in the last position only when there is no fraction.
  if (intDigits === '' && fracCount === 0) intDigits = '0';
  const firstZero = tokens.findIndex((t) => t.kind === 'digit' && t.zero);

  const parts: { text: string; number: boolean }[] = [];
  let intSeen = 0;
  let fracSeen = 0;
  let started = false;
  let signAt = -1;
  let floatingBefore: string | null = null;
  let floatingAfter: string | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.kind === 'text') parts.push({ text: t.text, number: false });
    else if (t.kind === 'sign') {
      if (t.style === 'implicit') signAt = parts.length;
      // S floats: PostgreSQL prints it right before the number (or right after it when S comes
      // after the number: '999 units' is '123+ unit'), and nothing where it was written.
      else if (t.style === 'S') {
        if (started) floatingAfter = signText('S', negative, fm);
        else floatingBefore = signText('S', negative, fm);
        parts.push({ text: '', number: false });
        continue;
      }
      parts.push({ text: signText(t.style, negative, fm), number: false });
    } else if (t.kind === 'point') {
      parts.push({ text: overflow || (fracCount > 0 && printed > 0) ? '.' : '', number: true });
      started = true;
    } else if (t.kind === 'group') {
      parts.push({ text: started ? ',' : fm ? '' : ' ', number: started });
    } else if (pointAt < 0 || i < pointAt) {
      const fromRight = digitsBefore - intSeen++;
      const digit = intDigits.length >= fromRight ? intDigits[intDigits.length - fromRight]! : firstZero >= 0 && i >= firstZero ? '0' : null;
      if (digit !== null) started = true;
      parts.push({ text: overflow ? '#' : (digit ?? (fm ? '' : ' ')), number: digit !== null || overflow });
    } else {
      parts.push({ text: fracSeen >= printed ? '' : overflow ? '#' : fracDigits[fracSeen]!, number: fracSeen < printed });
      fracSeen++;
    }
  }
  if (fm && !overflow) {
    trimFraction(parts, tokens, pointAt);
    // FM of a number that prints no digit at all (0, or 0.001 to two places) shows one 0: '0.'.
    const lastInt = tokens.findLastIndex((t, i) => t.kind === 'digit' && (pointAt < 0 || i < pointAt));
    if (lastInt >= 0 && !parts.some((p, i) => tokens[i]!.kind === 'digit' && /[0-9]/.test(p.text))) parts[lastInt] = { text: '0', number: true };
  }
  if (floatingBefore !== null || floatingAfter !== null) {
    const numberAt = parts.findIndex((p) => p.number && p.text !== '');
    if (numberAt >= 0 && floatingBefore !== null) parts.splice(numberAt, 0, { text: floatingBefore, number: false });
    const lastNumber = parts.findLastIndex((p) => p.number && p.text !== '');
    if (lastNumber >= 0 && floatingAfter !== null) parts.splice(lastNumber + 1, 0, { text: floatingAfter, number: false });
  }
  // A floating sign moves right past the blanks of digit positions the number did not reach.
  if (signAt >= 0) {
    const sign = parts[signAt]!;
    let j = signAt + 1;
    while (j < parts.length && !parts[j]!.number && parts[j]!.text.trim() === '' && tokens[j]!.kind !== 'text') j++;
    parts.splice(signAt, 1);
    parts.splice(j - 1, 0, sign);
  }
  return parts.map((p) => p.text).join('');
}

function signText(style: 'S' | 'MI' | 'SG' | 'implicit', negative: boolean, fm: boolean): string {
  if (style === 'S' || style === 'SG') return negative ? '-' : '+';
  return negative ? '-' : fm ? '' : ' ';
}

/** FM: the fraction's trailing zeros printed by 9 positions go (those of 0 positions stay). */
function trimFraction(parts: { text: string }[], tokens: readonly Token[], pointAt: number): void {
  if (pointAt < 0) return;
  for (let i = tokens.length - 1; i > pointAt; i--) {
    const t = tokens[i]!;
    if (t.kind !== 'digit' || parts[i]!.text === '') continue; // a float's position past its digits
    if (t.zero || parts[i]!.text !== '0') return;
    parts[i]!.text = '';
  }
}

/**
 * C's printf("%.*f", digits, x) as glibc prints it: the exact binary value rounded to `digits`
 * places, a tie to even (JavaScript's toFixed takes the larger of two equally near results).
 */
export function printfFixed(x: number, digits: number): string {
  const abs = Math.abs(x);
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  if (abs >= 1e21) return sign + BigInt(abs).toString() + (digits > 0 ? `.${'0'.repeat(digits)}` : ''); // an integer, exactly
  let text = abs.toFixed(digits);
  if (exactTie(abs, digits) && /[13579]$/.test(text)) {
    const units = BigInt(text.replace('.', '')) - 1n;
    const all = units.toString().padStart(digits + 1, '0');
    text = digits === 0 ? all : `${all.slice(0, -digits)}.${all.slice(-digits)}`;
  }
  return sign + text;
}

/** Whether x * 10^digits lies exactly halfway between two integers (x = mantissa * 2^exponent). */
function exactTie(x: number, digits: number): boolean {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const biased = Number((bits >> 52n) & 0x7ffn);
  const mantissa = biased === 0 ? bits & 0xfffffffffffffn : (bits & 0xfffffffffffffn) | 0x10000000000000n;
  const exponent = biased === 0 ? -1074 : biased - 1075;
  if (exponent >= 0) return false; // an integer
  const twice = mantissa * 10n ** BigInt(digits) * 2n;
  const den = 1n << BigInt(-exponent);
  return twice % den === 0n && (twice / den) % 2n === 1n;
}
