import { SvcError } from '../core/errors.js';
import { parseSql, type QueryExpr, type SelectQuery } from './parse/index.js';
import { tokenize, type Token } from './parse/tokens.js';

/**
 * SQL expression text that comes from a request (a REST filter, a column DEFAULT or CHECK) and is
 * spliced into generated SQL. It must be exactly ONE expression and nothing else: no second
 * statement, no clause after it (UNION, ORDER BY, FROM, AS), no parenthesis closing what the
 * generated text opened, no comment (it could hide the rest of the generated text), no $n (the
 * generated statement's own parameters). Subqueries are refused unless allowed: a row filter reads
 * its one table, as PostgREST's filters do.
 */
export interface ExpressionRules {
  /** What the text is, for messages: 'filter', 'default', 'check'. */
  readonly what: string;
  readonly allowSubqueries?: boolean;
  /** Longest text accepted, in bytes. */
  readonly textBytesMax: number;
}

function refused(rules: ExpressionRules, message: string, reason: string): SvcError {
  return new SvcError('INVALID_QUERY', `${rules.what} ${message}`, { [rules.what]: true, reason, field: rules.what });
}

/**
 * Checks that `text` is one SQL expression under `rules` and returns it trimmed; the caller
 * splices it wrapped in parentheses. Throws INVALID_QUERY saying what is wrong.
 */
export function checkExpression(text: string, rules: ExpressionRules): string {
  const trimmed = text.trim();
  if (trimmed === '') throw refused(rules, 'is empty: give one SQL expression', 'empty');
  if (Buffer.byteLength(trimmed, 'utf8') > rules.textBytesMax) {
    throw new SvcError('LIMIT_EXCEEDED', `${rules.what} is longer than ${rules.textBytesMax} bytes`, { field: rules.what, bytes_max: rules.textBytesMax });
  }
  checkTokens(trimmed, tokenize(trimmed), rules);
  const statements = parseSql(`SELECT ${trimmed}`);
  const body = statements.length === 1 ? statements[0]!.body : null;
  if (body?.kind !== 'query' || statements[0]!.explain) throw refused(rules, 'must be one SQL expression', 'not_one_expression');
  const select = checkSelectShape(body.query, rules);
  if (!rules.allowSubqueries && hasSubquery(select.targets[0]!.expr)) {
    throw refused(rules, 'may not contain a subquery: it reads only its own table', 'subquery');
  }
  return trimmed;
}

/** No comments, no `;`, no $n, and parentheses and brackets that never close what the text did not open. */
function checkTokens(text: string, tokens: readonly Token[], rules: ExpressionRules): void {
  let at = 0;
  let depth = 0;
  for (const t of tokens) {
    if (text.slice(at, t.start).trim() !== '') throw refused(rules, 'may not contain comments', 'comment');
    at = t.end;
    if (t.kind === 'punct' && t.value === ';') throw refused(rules, 'may not contain ";": it is one expression, not statements', 'semicolon');
    if (t.kind === 'param') throw refused(rules, `may not contain parameters such as ${t.text}; write the value itself`, 'parameter');
    if (t.kind === 'punct' && (t.value === '(' || t.value === '[')) depth++;
    if (t.kind === 'punct' && (t.value === ')' || t.value === ']')) depth--;
    if (depth < 0) throw refused(rules, 'closes a parenthesis it did not open', 'unbalanced');
  }
  if (text.slice(at).trim() !== '') throw refused(rules, 'may not contain comments', 'comment');
  if (depth !== 0) throw refused(rules, 'leaves a parenthesis open', 'unbalanced');
}

/** `SELECT <text>` must have parsed to one select list item, unnamed, and no other clause. */
function checkSelectShape(query: QueryExpr, rules: ExpressionRules): SelectQuery {
  if (query.kind !== 'select') throw refused(rules, 'must be one SQL expression', 'not_one_expression');
  const clauses =
    query.with !== null ||
    query.distinct !== null ||
    query.from.length > 0 ||
    query.where !== null ||
    query.groupBy.length > 0 ||
    query.having !== null ||
    query.windows.length > 0 ||
    query.orderBy.length > 0 ||
    query.limit !== null ||
    query.offset !== null ||
    query.withTies ||
    query.locking.length > 0;
  if (clauses) throw refused(rules, 'must be one SQL expression, with no clause after it', 'not_one_expression');
  const target = query.targets.length === 1 ? query.targets[0]! : null;
  if (!target || target.alias !== null) throw refused(rules, 'must be one SQL expression (no list, no alias)', 'not_one_expression');
  if (target.expr.kind === 'column_ref' && target.expr.column === null) throw refused(rules, 'must be one SQL expression, not *', 'not_one_expression');
  return query;
}

/** Whether an expression holds a subquery (EXISTS, IN (SELECT ...), a scalar subquery, ARRAY(SELECT ...)). */
function hasSubquery(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(hasSubquery);
  if ((node as { kind?: unknown }).kind === 'sublink') return true;
  return Object.values(node).some(hasSubquery);
}
