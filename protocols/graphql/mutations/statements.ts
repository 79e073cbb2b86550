import { SvcError } from '../../../core/errors.js';
import type { ColumnModel, TableModel } from '../model.js';
import { quoteIdent } from '../names.js';
import { selectList } from '../selection.js';
import { SqlParams } from '../sql-params.js';
import { compileWhere, type BoolExp } from '../where.js';
import type { MutationTable } from './sdl.js';

/** One parameterized statement: values never enter the SQL text. */
export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

type Row = Readonly<Record<string, unknown>>;

/** `<t>_on_conflict` as GraphQL hands it over. */
export interface OnConflict {
  readonly constraint: string;
  readonly update_columns?: readonly string[] | null;
  readonly where?: BoolExp | null;
}

/** `_set` and `_inc` of an update. */
export interface Changes {
  readonly _set?: Row | null;
  readonly _inc?: Row | null;
}

const badInput = (message: string, details: Record<string, unknown>): SvcError =>
  new SvcError('VALIDATION_ERROR', message, { reason: 'graphql_input', ...details });

/** `RETURNING "col" AS "field", …` (nothing when no column is wanted): rows come back keyed by GraphQL field names. */
function returning(columns: readonly ColumnModel[] | null, alias: string | null): string {
  if (columns === null) return '';
  return ` RETURNING ${alias === null ? columns.map((c) => `${c.sql} AS ${quoteIdent(c.field)}`).join(', ') : selectList(columns, alias)}`;
}

/**
 * Conditions through relations are refused in on_conflict.where: the engine's ON CONFLICT … WHERE
 * takes no subqueries (Hasura allows them; a documented gap).
 */
function refuseRelations(table: TableModel, exp: BoolExp | null | undefined): void {
  if (!exp) return;
  for (const [key, value] of Object.entries(exp)) {
    if (value === null || value === undefined) continue;
    if (key === '_and' || key === '_or') for (const e of value as BoolExp[]) refuseRelations(table, e);
    else if (key === '_not') refuseRelations(table, value as BoolExp);
    else if (table.relationByField.has(key)) throw badInput(`on_conflict.where cannot test a relation (${key}); test this table's columns`, { field: key });
  }
}

/** `ON CONFLICT (cols) DO NOTHING | DO UPDATE SET c = EXCLUDED.c, … [WHERE …]` (Hasura: empty update_columns is DO NOTHING). */
function conflictClause(m: MutationTable, conflict: OnConflict, params: SqlParams): string {
  const target = m.constraints.get(conflict.constraint);
  if (!target) throw badInput(`${m.table.base} has no constraint ${conflict.constraint}`, { constraint: conflict.constraint });
  const head = ` ON CONFLICT (${target.map((c) => c.sql).join(', ')})`;
  const columns = (conflict.update_columns ?? []).map((f) => m.table.columnByField.get(f)).filter((c): c is ColumnModel => c !== undefined);
  if (columns.length === 0) return `${head} DO NOTHING`;
  refuseRelations(m.table, conflict.where);
  // The existing row is named by the table's own name (INSERT … AS alias is not supported).
  const where = conflict.where ? ` WHERE ${compileWhere(m.table, quoteIdent(m.table.def.name), conflict.where, params)}` : '';
  return `${head} DO UPDATE SET ${columns.map((c) => `${c.sql} = EXCLUDED.${c.sql}`).join(', ')}${where}`;
}

/**
 * INSERT of the objects: the columns any object names, DEFAULT where an object leaves one out
 * (Hasura's rule; an explicit null is NULL). Objects naming no column at all get every default.
 */
export function insertStatement(
  m: MutationTable,
  objects: readonly Row[],
  conflict: OnConflict | null | undefined,
  wanted: readonly ColumnModel[] | null,
): Statement {
  if (objects.length === 0) throw badInput(`insert_${m.table.base}: objects is empty`, { field: 'objects' });
  const params = new SqlParams();
  const named = m.table.columns.filter((c) => objects.some((o) => o[c.field] !== undefined));
  const columns = named.length > 0 ? named : [m.table.columns[0]!];
  const rows = objects.map((o) => `(${columns.map((c) => (o[c.field] === undefined ? 'DEFAULT' : params.add(o[c.field]))).join(', ')})`);
  let sql = `INSERT INTO ${m.table.sql} (${columns.map((c) => c.sql).join(', ')}) VALUES ${rows.join(', ')}`;
  if (conflict) sql += conflictClause(m, conflict, params);
  return { sql: sql + returning(wanted, null), params: params.values };
}

/** `SET` terms of `_set` (a value) and `_inc` (the column plus a value); a column in both is refused. */
function setTerms(table: TableModel, changes: Changes, alias: string, params: SqlParams): string[] {
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const [op, values] of [
    ['_set', changes._set],
    ['_inc', changes._inc],
  ] as const) {
    for (const [field, value] of Object.entries(values ?? {})) {
      const column = table.columnByField.get(field);
      if (!column || value === undefined) continue;
      if (seen.has(field)) throw badInput(`column ${field} is both in _set and in _inc`, { field });
      seen.add(field);
      if (op === '_inc' && value === null) throw badInput(`_inc.${field} got null; give a number`, { field });
      terms.push(op === '_set' ? `${column.sql} = ${params.add(value)}` : `${column.sql} = ${alias}.${column.sql} + ${params.add(value)}`);
    }
  }
  if (terms.length === 0) throw badInput(`update_${table.base}: _set or _inc must name at least one column`, { field: '_set' });
  return terms;
}

/** `UPDATE t AS "t0" SET … WHERE <where> [RETURNING …]`. */
export function updateStatement(table: TableModel, where: BoolExp | null | undefined, changes: Changes, wanted: readonly ColumnModel[] | null): Statement {
  const params = new SqlParams();
  const alias = params.alias();
  const terms = setTerms(table, changes, alias, params);
  const condition = compileWhere(table, alias, where, params);
  return { sql: `UPDATE ${table.sql} AS ${alias} SET ${terms.join(', ')} WHERE ${condition}${returning(wanted, alias)}`, params: params.values };
}

/** `DELETE FROM t AS "t0" WHERE <where> [RETURNING …]`. */
export function deleteStatement(table: TableModel, where: BoolExp | null | undefined, wanted: readonly ColumnModel[] | null): Statement {
  const params = new SqlParams();
  const alias = params.alias();
  const condition = compileWhere(table, alias, where, params);
  return { sql: `DELETE FROM ${table.sql} AS ${alias} WHERE ${condition}${returning(wanted, alias)}`, params: params.values };
}

/** The `<t>_bool_exp` of one primary key: `{ id: { _eq: 1 } }` (a missing key part is refused, never "every row"). */
export function primaryKeyWhere(table: TableModel, key: Row | null | undefined): BoolExp {
  const out: Record<string, unknown> = {};
  for (const column of table.primaryKey) {
    const value = key?.[column.field];
    if (value === undefined || value === null) throw badInput(`${column.field} is required (primary key)`, { field: column.field });
    out[column.field] = { _eq: value };
  }
  return out;
}
