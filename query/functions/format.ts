/** PostgreSQL's format(): %s, %I, %L, %% with optional position (%2$s) and width (%-10s, %*s not supported). */
import { dataError } from '../types/errors.js';

function quoteIdent(s: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(s) ? s : `"${s.replace(/"/g, '""')}"`;
}

function quoteLiteral(s: string): string {
  const body = s.replace(/'/g, "''");
  return s.includes('\\') ? `E'${body.replace(/\\/g, '\\\\')}'` : `'${body}'`;
}

/** `args` are the arguments' text forms (null for NULL). */
export function formatSql(fmt: string, args: readonly (string | null)[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const m = /^(?:(\d+)\$)?(-)?(\d+)?([sIL%])/.exec(fmt.slice(i + 1));
    if (!m) throw dataError('unrecognized format() type specifier', '22023');
    i += m[0].length;
    if (m[4] === '%') {
      out += '%';
      continue;
    }
    const index = m[1] !== undefined ? Number(m[1]) - 1 : next;
    if (m[1] !== undefined && index < 0) throw dataError('format specifies argument 0, but arguments are numbered from 1', '22023');
    if (index >= args.length) throw dataError('too few arguments for format()', '22023');
    next = index + 1;
    const v = args[index]!;
    let piece: string;
    if (m[4] === 's') piece = v ?? '';
    else if (m[4] === 'I') {
      if (v === null) throw dataError('null values cannot be formatted as an SQL identifier', '22004');
      piece = quoteIdent(v);
    } else piece = v === null ? 'NULL' : quoteLiteral(v);
    const width = m[3] === undefined ? 0 : Number(m[3]);
    if (piece.length < width) piece = m[2] ? piece.padEnd(width) : piece.padStart(width);
    out += piece;
  }
  return out;
}
