import { constant, TEXT, type Expr } from '../plan/expr.js';
import { invalid } from './context.js';

/**
 * SIMILAR TO's pattern as the POSIX regular expression PostgreSQL matches it with
 * (similar_to_escape): anchored, % -> .*, _ -> ., ( -> (?:, regex-only specials escaped.
 * Only constant patterns: svcdb has no similar_to_escape function to call per row.
 */
export function similarPattern(pattern: Expr, escape: Expr | null): Expr {
  const escapeText = escape === null ? '\\' : constText(escape);
  const text = constText(pattern);
  if (text === null || escapeText === null) return constant(TEXT, null);
  const esc = Array.from(escapeText);
  if (esc.length > 1) throw invalid('invalid escape string', { hint: 'Escape string must be empty or one character.', sqlstate: '22025' });
  return constant(TEXT, similarToRegex(text, esc[0] ?? null));
}

function constText(e: Expr): string | null {
  if (e.kind !== 'const') throw invalid('SIMILAR TO needs constant pattern and escape strings', { reason: 'unsupported' });
  if (e.value !== null && typeof e.value !== 'string') throw invalid('SIMILAR TO needs text patterns');
  return e.value;
}

function similarToRegex(pattern: string, esc: string | null): string {
  let out = '^(?:';
  let afterEscape = false;
  let inClass = false;
  let classPos = 0;
  for (const c of Array.from(pattern)) {
    if (afterEscape) {
      if (c === '"' && !inClass) throw invalid('SIMILAR TO with an escaped double quote is not supported', { reason: 'unsupported' });
      out += `\\${c}`;
      afterEscape = false;
    } else if (esc !== null && c === esc) {
      afterEscape = true;
    } else if (inClass) {
      if (c === '\\') out += '\\';
      out += c;
      classPos++;
      if (c === ']' && classPos > 1) inClass = false;
      else if (c === '^' && classPos === 1) classPos = 0;
    } else if (c === '[') {
      out += c;
      inClass = true;
      classPos = 0;
    } else if (c === '%') out += '.*';
    else if (c === '_') out += '.';
    else if (c === '(') out += '(?:';
    else if (c === '\\' || c === '.' || c === '^' || c === '$') out += `\\${c}`;
    else out += c;
  }
  return `${out})$`;
}
