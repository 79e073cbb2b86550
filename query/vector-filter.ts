import { SvcError } from '../core/errors.js';
import { parseSql, type AstNode } from './parse/index.js';

/** Clauses a bare WHERE condition must not bring along (they would change the statement around it). */
const FORBIDDEN_CLAUSES = ['groupby', 'having', 'orderby', 'limit', 'window', 'with', '_next', 'into', 'distinct'] as const;

function present(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.values(value as object).some(present);
  return value !== '' && value !== false;
}

/** True when the tree holds a `$n` parameter (a filter has no parameters of its own). */
function hasParameter(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(hasParameter);
  if (node === null || typeof node !== 'object') return false;
  const n = node as AstNode;
  if (n.type === 'var' && n.prefix === '$') return true;
  return Object.values(n).some(hasParameter);
}

/**
 * Checks that `filter` is ONE SQL condition (the WHERE of `SELECT 1 FROM t WHERE (<filter>)`):
 * one statement, nothing but a WHERE, no `$n` parameters. Returns the text the caller splices
 * into its own statement, parenthesized twice. Throws INVALID_QUERY otherwise (a second
 * statement, a comment eating the closing parenthesis, ORDER BY / LIMIT / UNION...). Subqueries inside the condition stay allowed: they run
 * with the caller's own tenant and role, as the same text would through POST /query.
 */
export function singleCondition(filter: string, field = 'filter'): string {
  const fail = (why: string): never => {
    throw new SvcError('INVALID_QUERY', `${field} must be one SQL condition (${why})`, { field, reason: 'invalid_filter' });
  };
  if (filter.trim() === '') fail('it is empty');
  let statements;
  try {
    statements = parseSql(`SELECT 1 FROM t WHERE (${filter})`);
  } catch (error) {
    const message = error instanceof Error ? error.message : 'syntax error';
    throw new SvcError('INVALID_QUERY', `${field} is not a valid SQL condition: ${message}`, { field, reason: 'invalid_filter' }, error);
  }
  if (statements.length !== 1) fail('found more than one statement');
  const ast = statements[0]!.ast as AstNode | null;
  if (ast === null || ast.type !== 'select' || statements[0]!.explain !== null) fail('it is not a condition');
  const select = ast as AstNode;
  if (!Array.isArray(select.from) || select.from.length !== 1) fail('it changes the FROM clause');
  for (const clause of FORBIDDEN_CLAUSES) if (present(select[clause])) fail(`it brings a ${clause.replace('_next', 'set operation')} clause`);
  if (hasParameter(select.where)) fail('it refers to a $n parameter');
  // `(filter)` parsed as the whole WHERE; one more pair keeps `a) OR (b` from escaping the caller's AND.
  return `((${filter}))`;
}
