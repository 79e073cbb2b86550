import { SvcError } from '../../core/errors.js';
import type { Token } from './tokens.js';

/**
 * Statements PostgreSQL has and svcdb does not: refused by name before node-sql-parser sees them,
 * which would report a syntax error at a word that is valid SQL.
 */
const UNSUPPORTED: readonly (readonly string[])[] = [
  ['create', 'materialized', 'view'],
  ['drop', 'materialized', 'view'],
  ['refresh', 'materialized', 'view'],
  ['alter', 'materialized', 'view'],
  ['create', 'schema'],
  ['drop', 'schema'],
  ['alter', 'schema'],
  ['create', 'function'],
  ['create', 'or', 'replace', 'function'],
  ['drop', 'function'],
  ['alter', 'function'],
  ['create', 'procedure'],
  ['create', 'or', 'replace', 'procedure'],
  ['drop', 'procedure'],
  ['call'],
  ['comment', 'on'],
];

/** Throws INVALID_QUERY "X is not supported" when the statement starts with one of the words above. */
export function refuseUnsupported(tokens: readonly Token[]): void {
  const words = tokens.slice(0, 4).map((t) => (t.kind === 'ident' ? t.value : ''));
  for (const prefix of UNSUPPORTED) {
    if (!prefix.every((w, i) => words[i] === w)) continue;
    const name = prefix
      .filter((w) => w !== 'or' && w !== 'replace')
      .join(' ')
      .toUpperCase();
    throw new SvcError('INVALID_QUERY', `${name} is not supported`, { statement: name, reason: 'unsupported' });
  }
}
