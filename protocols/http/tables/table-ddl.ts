import { SvcError, isSvcError } from '../../../core/errors.js';
import { checkExpression, typeSystem } from '../../../query/index.js';
import { qualified, quoteIdent, type TableRef } from './table-ref.js';

/**
 * Table and index definitions of POST /tables and PATCH /tables/{name} turned into DDL text for
 * the engine. Identifiers are always quoted; the SQL pieces a user writes (type, default, check)
 * are checked to be exactly a type name or one expression before they are spliced, and the engine
 * checks again that each generated text is exactly one statement (SqlEngine.executeDdlBatch).
 */
export interface ColumnDefinition {
  readonly name: string;
  readonly type: string;
  readonly nullable?: boolean;
  readonly primary_key?: boolean;
  readonly default?: string | number | boolean | null;
  readonly check?: string | null;
}

export interface IndexDefinition {
  readonly name?: string;
  readonly columns: readonly string[];
  readonly unique?: boolean;
  readonly type?: 'btree' | 'hnsw';
  readonly options?: Readonly<Record<string, number | string>>;
}

export interface CreateTableBody {
  readonly name: string;
  readonly schema?: string;
  readonly columns: readonly ColumnDefinition[];
  readonly indexes?: readonly IndexDefinition[];
  readonly if_not_exists?: boolean;
}

export type AlterOperation =
  | { readonly operation: 'add_column'; readonly column: ColumnDefinition }
  | { readonly operation: 'drop_column'; readonly column_name: string }
  | { readonly operation: 'rename_column'; readonly old_name: string; readonly new_name: string }
  | { readonly operation: 'add_index'; readonly index: IndexDefinition };

/** Bounds of the SQL text a definition may carry. */
export interface DdlTextLimits {
  readonly queryTextBytesMax: number;
}

/** Words, (n) or (p,s) modifiers and [] suffixes: 'VARCHAR(255)', 'TIMESTAMP WITH TIME ZONE', 'INTEGER[]'. */
const TYPE_TEXT = /^[A-Za-z_][A-Za-z0-9_]*(?:\s*\(\s*\d+\s*(?:,\s*\d+\s*)?\)|\s*\[\s*\d*\s*\]|\s+[A-Za-z_][A-Za-z0-9_]*)*$/;
const TYPE_TEXT_BYTES_MAX = 128;

/** The error of a definition field, naming it (`columns.2.type`) so the client knows which. */
function atField<T>(field: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (!isSvcError(error)) throw error;
    throw new SvcError(error.code, `${field}: ${error.message}`, { ...error.details, field }, error);
  }
}

/** A column type: its text must look like a type name and be one the engine knows. */
function typeSql(type: string): string {
  const text = type.trim();
  if (text.length > TYPE_TEXT_BYTES_MAX || !TYPE_TEXT.test(text)) {
    throw new SvcError(
      'INVALID_QUERY',
      `"${text.slice(0, TYPE_TEXT_BYTES_MAX)}" is not a type name (e.g. BIGINT, VARCHAR(255), TIMESTAMP WITH TIME ZONE, VECTOR(3))`,
      { reason: 'invalid_type' },
    );
  }
  typeSystem.parseTypeName(text);
  return text;
}

function defaultSql(value: string | number | boolean, limits: DdlTextLimits): string {
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return String(value);
  return `(${checkExpression(value, { what: 'default', textBytesMax: limits.queryTextBytesMax })})`;
}

/** One column definition: "name" TYPE [NOT NULL] [DEFAULT (...)] [CHECK (...)] [PRIMARY KEY]. */
export function columnSql(column: ColumnDefinition, field: string, limits: DdlTextLimits, inlinePrimaryKey: boolean): string {
  const parts = [quoteIdent(column.name), atField(`${field}.type`, () => typeSql(column.type))];
  if (column.nullable === false) parts.push('NOT NULL');
  if (column.default !== undefined && column.default !== null) {
    const value = column.default;
    parts.push(`DEFAULT ${atField(`${field}.default`, () => defaultSql(value, limits))}`);
  }
  if (column.check !== undefined && column.check !== null) {
    const check = column.check;
    parts.push(`CHECK (${atField(`${field}.check`, () => checkExpression(check, { what: 'check', textBytesMax: limits.queryTextBytesMax }))})`);
  }
  if (inlinePrimaryKey && column.primary_key) parts.push('PRIMARY KEY');
  return parts.join(' ');
}

const HNSW_OPCLASS: Readonly<Record<string, string>> = { cosine: 'vector_cosine_ops', l2: 'vector_l2_ops', inner_product: 'vector_ip_ops' };

/** CREATE [UNIQUE] INDEX ["name"] ON "schema"."table" USING method ("c", ...) [WITH (k = n, ...)]. */
export function indexSql(ref: TableRef, index: IndexDefinition): string {
  const name = index.name === undefined ? '' : ` ${quoteIdent(index.name)}`;
  const { metric, ...numeric } = index.options ?? {};
  // An hnsw metric becomes the column's operator class (pgvector's names; the schema allows three).
  const opclass = typeof metric === 'string' ? ` ${HNSW_OPCLASS[metric]}` : '';
  const columns = index.columns.map((c) => `${quoteIdent(c)}${opclass}`).join(', ');
  // Option keys are identifiers and values integers (the JSON schema says so): nothing else is spliced.
  const options = Object.entries(numeric).map(([k, v]) => `${k} = ${v}`);
  const withClause = options.length > 0 ? ` WITH (${options.join(', ')})` : '';
  return `CREATE ${index.unique ? 'UNIQUE ' : ''}INDEX${name} ON ${qualified(ref)} USING ${index.type ?? 'btree'} (${columns})${withClause}`;
}

/** POST /tables: CREATE TABLE, then one CREATE INDEX per index definition (run as one batch). */
export function createTableStatements(ref: TableRef, body: CreateTableBody, limits: DdlTextLimits): string[] {
  const keyColumns = body.columns.filter((c) => c.primary_key).map((c) => c.name);
  const inline = keyColumns.length === 1;
  const items = body.columns.map((c, i) => columnSql(c, `columns.${i}`, limits, inline));
  if (keyColumns.length > 1) items.push(`PRIMARY KEY (${keyColumns.map(quoteIdent).join(', ')})`);
  const table = `CREATE TABLE ${qualified(ref)} (${items.join(', ')})`;
  return [table, ...(body.indexes ?? []).map((index) => indexSql(ref, index))];
}

/** PATCH /tables/{name}: one statement per operation, in order (run as one batch). */
export function alterStatements(ref: TableRef, operations: readonly AlterOperation[], limits: DdlTextLimits): string[] {
  const table = qualified(ref);
  return operations.map((op, i) => {
    switch (op.operation) {
      case 'add_column':
        return `ALTER TABLE ${table} ADD COLUMN ${columnSql(op.column, `operations.${i}.column`, limits, true)}`;
      case 'drop_column':
        return `ALTER TABLE ${table} DROP COLUMN ${quoteIdent(op.column_name)}`;
      case 'rename_column':
        return `ALTER TABLE ${table} RENAME COLUMN ${quoteIdent(op.old_name)} TO ${quoteIdent(op.new_name)}`;
      case 'add_index':
        return indexSql(ref, op.index);
    }
  });
}
