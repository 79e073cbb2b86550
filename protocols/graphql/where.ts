import { SvcError } from '../../core/errors.js';
import type { ColumnModel, RelationModel, TableModel } from './model.js';
import type { SqlParams } from './sql-params.js';
import { WHERE_DEPTH_MAX } from './limits.js';

/** A `<table>_bool_exp` value as GraphQL hands it over (already coerced to the input types). */
export type BoolExp = Readonly<Record<string, unknown>>;

/** Comparison operators of `<scalar>_comparison_exp` and their SQL. */
const BINARY: Readonly<Record<string, string>> = Object.freeze({
  _eq: '=',
  _neq: '<>',
  _gt: '>',
  _gte: '>=',
  _lt: '<',
  _lte: '<=',
  _like: 'LIKE',
  _nlike: 'NOT LIKE',
  _ilike: 'ILIKE',
  _nilike: 'NOT ILIKE',
  _contains: '@>',
  _contained_in: '<@',
});

/** The comparison operators every scalar has, and those of text columns only. */
export const COMPARISON_OPERATORS = ['_eq', '_neq', '_gt', '_gte', '_lt', '_lte', '_in', '_nin', '_is_null'] as const;
export const TEXT_OPERATORS = ['_like', '_nlike', '_ilike', '_nilike'] as const;
/** The operators of array columns (besides _is_null). */
export const ARRAY_OPERATORS = ['_eq', '_neq', '_contains', '_contained_in'] as const;

const badInput = (message: string, details: Record<string, unknown>): SvcError =>
  new SvcError('VALIDATION_ERROR', message, { reason: 'graphql_input', ...details });

/** One column's comparison object: its operators ANDed (`{_gt: 1, _lt: 5}`). */
function comparison(column: ColumnModel, ref: string, exp: BoolExp, params: SqlParams): string[] {
  const parts: string[] = [];
  for (const [op, value] of Object.entries(exp)) {
    if (value === undefined) continue;
    if (op === '_is_null') {
      if (value === null) throw badInput(`${column.field}: _is_null needs true or false`, { field: column.field });
      parts.push(`${ref} IS ${value ? '' : 'NOT '}NULL`);
      continue;
    }
    // Hasura once read `_eq: null` as "no condition" (and deleted everything); we refuse it.
    if (value === null) throw badInput(`${column.field}: ${op} got null; use _is_null to test for NULL`, { field: column.field, operator: op });
    if (op === '_in' || op === '_nin') {
      const list = value as readonly unknown[];
      if (list.length === 0) parts.push(op === '_in' ? 'FALSE' : 'TRUE');
      else parts.push(`${ref} ${op === '_in' ? 'IN' : 'NOT IN'} (${list.map((v) => params.add(v)).join(', ')})`);
      continue;
    }
    const sqlOp = BINARY[op];
    if (sqlOp === undefined) throw badInput(`unknown operator ${op}`, { field: column.field, operator: op });
    parts.push(`${ref} ${sqlOp} ${params.add(value)}`);
  }
  return parts;
}

/** `EXISTS (SELECT 1 FROM target WHERE join AND inner)`: a condition through a relation. */
function throughRelation(relation: RelationModel, alias: string, exp: BoolExp, params: SqlParams, depth: number): string {
  const inner = params.alias();
  const join = relation.from.map((c, i) => `${inner}.${relation.to[i]!.sql} = ${alias}.${c.sql}`);
  const condition = whereAt(relation.target, inner, exp, params, depth + 1);
  return `EXISTS (SELECT 1 FROM ${relation.target.sql} AS ${inner} WHERE ${[...join, condition].join(' AND ')})`;
}

const joined = (parts: readonly string[], op: 'AND' | 'OR', empty: string): string =>
  parts.length === 0 ? empty : parts.length === 1 ? parts[0]! : `(${parts.join(` ${op} `)})`;

/**
 * SQL for a `<table>_bool_exp` on rows of `table` under `alias`: keys ANDed, `_and`/`_or`/`_not`,
 * column comparisons, and conditions through relations (EXISTS). An empty object is TRUE; an empty
 * `_or` list is FALSE and an empty `_and` list TRUE (their logical identities).
 */
export function compileWhere(table: TableModel, alias: string, exp: BoolExp | null | undefined, params: SqlParams): string {
  return whereAt(table, alias, exp, params, 1);
}

/** compileWhere at a nesting depth: deeper than WHERE_DEPTH_MAX is refused (it would overflow the SQL parser's stack). */
function whereAt(table: TableModel, alias: string, exp: BoolExp | null | undefined, params: SqlParams, depth: number): string {
  if (exp === null || exp === undefined) return 'TRUE';
  if (depth > WHERE_DEPTH_MAX) {
    throw new SvcError('LIMIT_EXCEEDED', `a where nests more than ${WHERE_DEPTH_MAX} levels of _and/_or/_not and relations`, {
      limit: 'where_depth',
      where_depth_max: WHERE_DEPTH_MAX,
    });
  }
  const parts: string[] = [];
  for (const [key, value] of Object.entries(exp)) {
    if (value === undefined || value === null) continue;
    if (key === '_and' || key === '_or') {
      const items = (value as BoolExp[]).map((e) => whereAt(table, alias, e, params, depth + 1));
      parts.push(joined(items, key === '_and' ? 'AND' : 'OR', key === '_and' ? 'TRUE' : 'FALSE'));
    } else if (key === '_not') {
      parts.push(`NOT (${whereAt(table, alias, value as BoolExp, params, depth + 1)})`);
    } else if (table.columnByField.has(key)) {
      const column = table.columnByField.get(key)!;
      parts.push(...comparison(column, `${alias}.${column.sql}`, value as BoolExp, params));
    } else if (table.relationByField.has(key)) {
      parts.push(throughRelation(table.relationByField.get(key)!, alias, value as BoolExp, params, depth));
    } else {
      throw badInput(`${table.base}_bool_exp has no field ${key}`, { field: key });
    }
  }
  return joined(parts, 'AND', 'TRUE');
}
