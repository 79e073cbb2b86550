import type { SqlType, SqlValue } from './values.js';

/**
 * The catalog vocabulary: what a table is. Ids are assigned by the writer when the DDL is
 * validated and are carried in the log record, so replay always yields the same ids.
 * Column ids are stable across renames; row images in the log are keyed by column id.
 */
export type TableId = number;
export type ColumnId = number;
export type IndexId = number;

export const DEFAULT_TENANT = 'default';
export const DEFAULT_SCHEMA = 'public';

export interface ColumnDef {
  readonly id: ColumnId;
  readonly name: string;
  readonly type: SqlType;
  readonly nullable: boolean;
  /** SQL expression text of the DEFAULT, or null. */
  readonly defaultExpr: string | null;
  /**
   * The value rows written before this column existed read as (PostgreSQL's attmissingval):
   * the constant default at ADD COLUMN time, or null.
   */
  readonly missingValue: SqlValue;
  /** BIGSERIAL/SERIAL: the name of the sequence feeding the default. */
  readonly sequence: string | null;
}

export type IndexKind = 'btree' | 'hnsw';

export interface IndexDef {
  readonly id: IndexId;
  readonly name: string;
  readonly kind: IndexKind;
  readonly columnIds: readonly ColumnId[];
  /** Per column, true for DESC; same length as columnIds. */
  readonly descending: readonly boolean[];
  readonly unique: boolean;
  readonly primary: boolean;
  /** hnsw: m, ef_construction, metric (as a number code). */
  readonly options: Readonly<Record<string, number | string>>;
}

export type ConstraintKind = 'primary_key' | 'unique' | 'check' | 'foreign_key' | 'not_null';
export type ForeignKeyAction = 'restrict' | 'cascade' | 'set_null' | 'no_action';

export interface ConstraintDef {
  readonly name: string;
  readonly kind: ConstraintKind;
  /** SQL text: the CHECK expression, or a readable definition for the other kinds. */
  readonly definition: string;
  readonly columnIds: readonly ColumnId[];
  readonly references?: {
    readonly tableId: TableId;
    readonly columnIds: readonly ColumnId[];
    readonly onDelete: ForeignKeyAction;
  };
}

export type TableKind = 'table' | 'view' | 'materialized_view';

export interface TableDef {
  readonly id: TableId;
  readonly tenant: string;
  readonly schema: string;
  readonly name: string;
  readonly kind: TableKind;
  readonly columns: readonly ColumnDef[];
  /**
   * Column ids of the primary key, in key order. Empty: the table has no primary key and rows are
   * keyed by a hidden BIGINT row id the writer assigns (like PostgreSQL's ctid, but stable).
   */
  readonly primaryKey: readonly ColumnId[];
  readonly indexes: readonly IndexDef[];
  readonly constraints: readonly ConstraintDef[];
  /** Views: the SELECT text. */
  readonly viewSql: string | null;
  readonly createdAtMicros: bigint;
  readonly updatedAtMicros: bigint;
}

/**
 * A materialized view created or refreshed WITH NO DATA keeps this comment before its query text
 * (viewSql): the populated flag rides in the catalog record without a new log schema version.
 */
export const UNPOPULATED_MARK = '/* svcdb: not populated */ ';

/** False for a materialized view created or last refreshed WITH NO DATA (its SELECT is refused). */
export function isPopulated(def: TableDef): boolean {
  return def.kind !== 'materialized_view' || !(def.viewSql ?? '').startsWith(UNPOPULATED_MARK);
}

/** A materialized view's defining query, without the unpopulated mark. */
export function matviewQuery(def: TableDef): string {
  const sql = def.viewSql ?? '';
  return sql.startsWith(UNPOPULATED_MARK) ? sql.slice(UNPOPULATED_MARK.length) : sql;
}
