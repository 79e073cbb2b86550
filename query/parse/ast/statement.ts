/**
 * svcdb's own syntax tree of statements: queries, DML, DDL, transaction control, EXPLAIN, and
 * svcdb's own CDC statements. The engine switches on `Statement.kind`; nothing past query/parse
 * reads a parser's tree. See syntax.ts for the conventions.
 */
import type { DmlStatement, QualifiedName, QueryExpr, SqlExpr, TypeName } from './syntax.js';

// ---------------------------------------------------------------- DDL

export interface ColumnDef {
  readonly name: string;
  readonly type: TypeName;
  /** SERIAL/BIGSERIAL/SMALLSERIAL are translated to their integer type with `serial` set. */
  readonly serial: boolean;
  readonly constraints: readonly ColumnConstraint[];
  readonly collation: string | null;
  readonly loc: number;
}

export type ColumnConstraint =
  | { readonly kind: 'not_null'; readonly name: string | null }
  | { readonly kind: 'null'; readonly name: string | null }
  | { readonly kind: 'default'; readonly name: string | null; readonly expr: SqlExpr }
  | { readonly kind: 'primary_key'; readonly name: string | null }
  | { readonly kind: 'unique'; readonly name: string | null; readonly nullsNotDistinct: boolean }
  | { readonly kind: 'check'; readonly name: string | null; readonly expr: SqlExpr; readonly noInherit: boolean }
  | { readonly kind: 'references'; readonly name: string | null; readonly ref: ForeignKeyRef }
  | { readonly kind: 'identity'; readonly name: string | null; readonly always: boolean }
  | { readonly kind: 'generated'; readonly name: string | null; readonly expr: SqlExpr };

export interface ForeignKeyRef {
  readonly table: QualifiedName;
  /** null: the referenced table's primary key. */
  readonly columns: readonly string[] | null;
  readonly onDelete: ReferentialAction;
  readonly onUpdate: ReferentialAction;
  readonly match: 'simple' | 'full' | 'partial';
  readonly deferrable: boolean;
}

export type ReferentialAction = 'no_action' | 'restrict' | 'cascade' | 'set_null' | 'set_default';

export type TableConstraint =
  | { readonly kind: 'primary_key'; readonly name: string | null; readonly columns: readonly string[] }
  | { readonly kind: 'unique'; readonly name: string | null; readonly columns: readonly string[]; readonly nullsNotDistinct: boolean }
  | { readonly kind: 'check'; readonly name: string | null; readonly expr: SqlExpr; readonly noInherit: boolean }
  | { readonly kind: 'foreign_key'; readonly name: string | null; readonly columns: readonly string[]; readonly ref: ForeignKeyRef };

export interface CreateTableStatement {
  readonly kind: 'create_table';
  readonly table: QualifiedName;
  readonly ifNotExists: boolean;
  readonly columns: readonly ColumnDef[];
  readonly constraints: readonly TableConstraint[];
  /** CREATE TABLE t AS SELECT ... (null otherwise). */
  readonly asQuery: QueryExpr | null;
  /** CREATE TABLE t (a, b) AS SELECT ...: the column names given to the query's columns; null when not written. */
  readonly asColumns: readonly string[] | null;
  /** false for CREATE TABLE ... AS ... WITH NO DATA (the table is created empty); true otherwise. */
  readonly withData: boolean;
  readonly temporary: boolean;
  readonly unlogged: boolean;
  readonly loc: number;
}

export interface IndexElement {
  /** A column name, or null when the element is an expression. */
  readonly column: string | null;
  readonly expr: SqlExpr | null;
  /** Operator class as written: vector_l2_ops, vector_cosine_ops, vector_ip_ops, ... */
  readonly opclass: string | null;
  readonly direction: 'asc' | 'desc' | null;
  readonly nulls: 'first' | 'last' | null;
}

export interface CreateIndexStatement {
  readonly kind: 'create_index';
  readonly name: string | null;
  readonly table: QualifiedName;
  readonly unique: boolean;
  readonly ifNotExists: boolean;
  readonly concurrently: boolean;
  /** Access method, lower case: btree (default), hnsw, hash, gin, ... */
  readonly method: string;
  readonly elements: readonly IndexElement[];
  /** WITH (m = 16, ef_construction = 64): option values as written (numbers as numbers). */
  readonly options: Readonly<Record<string, string | number | boolean>>;
  readonly include: readonly string[];
  /** Partial index predicate. */
  readonly where: SqlExpr | null;
  readonly loc: number;
}

export interface CreateViewStatement {
  readonly kind: 'create_view';
  readonly view: QualifiedName;
  readonly orReplace: boolean;
  readonly columns: readonly string[] | null;
  readonly query: QueryExpr;
  /** The query's own text, as written (what the catalog keeps and re-parses). */
  readonly queryText: string;
  readonly materialized: boolean;
  readonly temporary: boolean;
  /** CREATE MATERIALIZED VIEW IF NOT EXISTS. */
  readonly ifNotExists: boolean;
  /** CREATE MATERIALIZED VIEW ... WITH NO DATA: false. */
  readonly withData: boolean;
  readonly loc: number;
}

/** REFRESH MATERIALIZED VIEW [CONCURRENTLY] v [WITH [NO] DATA]. */
export interface RefreshMatviewStatement {
  readonly kind: 'refresh_matview';
  readonly view: QualifiedName;
  readonly concurrently: boolean;
  readonly withData: boolean;
  readonly loc: number;
}

export type AlterTableAction =
  | { readonly kind: 'add_column'; readonly column: ColumnDef; readonly ifNotExists: boolean }
  | { readonly kind: 'drop_column'; readonly column: string; readonly ifExists: boolean; readonly cascade: boolean }
  | { readonly kind: 'add_constraint'; readonly constraint: TableConstraint }
  | { readonly kind: 'drop_constraint'; readonly name: string; readonly ifExists: boolean }
  | { readonly kind: 'alter_column_default'; readonly column: string; readonly default: SqlExpr | null }
  | { readonly kind: 'alter_column_not_null'; readonly column: string; readonly notNull: boolean }
  | { readonly kind: 'alter_column_type'; readonly column: string; readonly type: TypeName; readonly using: SqlExpr | null }
  | { readonly kind: 'rename_column'; readonly from: string; readonly to: string }
  | { readonly kind: 'rename_table'; readonly to: string }
  | { readonly kind: 'rename_constraint'; readonly from: string; readonly to: string };

export interface AlterTableStatement {
  readonly kind: 'alter_table';
  readonly table: QualifiedName;
  readonly ifExists: boolean;
  readonly actions: readonly AlterTableAction[];
  readonly loc: number;
}

export interface DropStatement {
  readonly kind: 'drop';
  readonly object: 'table' | 'view' | 'index' | 'materialized_view' | 'schema' | 'sequence' | 'type' | 'function' | 'extension';
  readonly names: readonly QualifiedName[];
  readonly ifExists: boolean;
  readonly cascade: boolean;
  readonly concurrently: boolean;
  readonly loc: number;
}

export interface TruncateStatement {
  readonly kind: 'truncate';
  readonly tables: readonly QualifiedName[];
  readonly restartIdentity: boolean;
  readonly cascade: boolean;
  readonly loc: number;
}

// ---------------------------------------------------------------- the rest

export interface TransactionStatement {
  readonly kind: 'transaction';
  readonly command: 'BEGIN' | 'COMMIT' | 'ROLLBACK' | 'SAVEPOINT' | 'RELEASE' | 'ROLLBACK TO';
  readonly savepoint: string | null;
  /** BEGIN ISOLATION LEVEL ... / READ ONLY, as written (lower case). */
  readonly options: readonly string[];
  readonly loc: number;
}

/** A statement PostgreSQL parses that svcdb has no executor for: refused with a clear "not supported" error naming it. */
export interface UnsupportedStatement {
  readonly kind: 'unsupported';
  /** PostgreSQL's name of the statement: "CREATE FUNCTION", "COPY", "MERGE", ... */
  readonly name: string;
  readonly loc: number;
}

export interface CdcCreateStatement {
  readonly kind: 'cdc_create';
  readonly table: QualifiedName;
  readonly destination:
    | { readonly kind: 'kafka'; readonly brokers: string; readonly topic: string | null }
    | { readonly kind: 'kinesis'; readonly stream: string; readonly region: string };
  readonly format: 'json' | 'avro';
  readonly name: string | null;
  readonly snapshot: boolean;
  /** WITH (operations = ..., columns = ..., predicate = ...): which events the stream sends. */
  readonly filter: { readonly operations?: readonly string[]; readonly columns?: readonly string[]; readonly predicate?: string } | null;
}

/** svcdb's CDC statements (parse/cdc-statements.ts: PostgreSQL has no grammar for them). */
export type CdcStatement =
  | CdcCreateStatement
  | { readonly kind: 'cdc_show' }
  | { readonly kind: 'cdc_status'; readonly name: string }
  | { readonly kind: 'cdc_alter'; readonly name: string; readonly action: 'PAUSE' | 'RESUME' }
  | { readonly kind: 'cdc_drop'; readonly name: string; readonly ifExists: boolean };

export type DdlStatement =
  CreateTableStatement | CreateIndexStatement | CreateViewStatement | RefreshMatviewStatement | AlterTableStatement | DropStatement | TruncateStatement;

/** One parsed statement's body. A query is `{ kind: 'query' }` around its QueryExpr. */
export type StatementBody =
  | { readonly kind: 'query'; readonly query: QueryExpr; readonly loc: number }
  | DmlStatement
  | DdlStatement
  | TransactionStatement
  | CdcStatement
  | UnsupportedStatement;

export interface ExplainOptions {
  readonly analyze: boolean;
  readonly format: 'text' | 'json' | 'yaml';
}

/** What the parse adapter returns for each statement of a request. */
export interface ParsedStatement {
  /** The statement's original text (without the trailing semicolon). */
  readonly text: string;
  /** Offset of the statement in the request text (loc values are offsets in the request text, like `offset`). */
  readonly offset: number;
  readonly explain: ExplainOptions | null;
  readonly body: StatementBody;
  /** The highest $n the statement refers to (0 when none). */
  readonly paramCount: number;
}
