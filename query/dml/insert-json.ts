import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { SvcError, columnNotFound, isSvcError } from '../../core/errors.js';
import { invalid } from '../bind/index.js';
import type { ParsedStatement } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import type { QueryResult } from '../result.js';
import type { ExecContext } from '../exec/index.js';
import type { QValue, TypeSystem } from '../types/contract.js';
import { notWritable, submitDml, type DmlDeps, type DmlRun } from './common.js';
import { writeProposed, type Conflict } from './insert.js';
import { defaultsOf } from './row-source.js';

/** ON CONFLICT of a JSON insert: the unique key it is about and what to do on a clash. */
export interface JsonConflict {
  /** Columns of a unique index or the primary key; empty: any unique key (nothing) or the primary key (update). */
  readonly columns: readonly string[];
  readonly action: 'update' | 'nothing';
  /** Columns set from the proposed row (EXCLUDED); null: every column given in the rows but the conflict key. */
  readonly updateColumns: readonly string[] | null;
}

/** Rows given as JSON objects (column name -> JSON value), inserted without SQL text. */
export interface JsonInsert {
  readonly schema: string | null;
  readonly table: string;
  readonly rows: readonly Readonly<Record<string, unknown>>[];
  /** Column names to return; ['*'] all of them; empty: none. */
  readonly returning: readonly string[];
  readonly onConflict: JsonConflict | null;
}

/** What a JSON insert is, for the read-only check and the DML deps (it has no SQL text). */
export const JSON_INSERT_STATEMENT: ParsedStatement = Object.freeze({
  text: 'INSERT (JSON rows)',
  offset: 0,
  explain: null,
  body: Object.freeze({
    kind: 'insert',
    with: null,
    table: Object.freeze({ schema: null, name: '' }),
    alias: null,
    columns: null,
    source: null,
    overriding: null,
    onConflict: null,
    returning: null,
    loc: 0,
  }),
  paramCount: 0,
});

/**
 * INSERT of JSON rows: the same validation, ON CONFLICT handling and one log record as INSERT ...
 * VALUES (writeProposed), without building and parsing SQL text for every cell. A key missing from
 * a row takes the column's DEFAULT; an explicit null is NULL. Values convert as $n parameters do.
 */
export function insertJson(request: JsonInsert, deps: DmlDeps): Promise<QueryResult> {
  // Not an async body: writeProposed's outcome (or promise) is returned as it is (a promise and its
  // turns less per insert); what throws here still rejects, as submitDml awaits the body inside its builder.
  return submitDml(deps, 'INSERT', (run) => {
    const table = run.ctx.table(request.schema, request.table).def;
    if (table.kind === 'materialized_view') throw notWritable(table);
    if (table.kind !== 'table') throw invalid(`cannot insert into view "${table.name}"`, { table: table.name });
    // One row (POST rows' usual body): its keys are read once, in one pass that also finds their columns.
    const one = request.rows.length === 1 ? rowCells(table, request.rows[0]!) : null;
    const given = one !== null ? one.given : givenColumns(table, request.rows);
    const conflict = request.onConflict ? conflictOf(table, request.onConflict, given) : null;
    const returning = returningOf(table, request.returning);
    const proposed = one !== null ? [cellsRow(run, table, one.cells)] : proposedRows(run, table, request.rows);
    return writeProposed(run, table, proposed, conflict, returning);
  });
}

/** Column positions by name, per table definition (a definition never changes: DDL makes a new one). */
const positionsByName = new WeakMap<TableDef, ReadonlyMap<string, number>>();

function position(table: TableDef, name: string): number {
  let positions = positionsByName.get(table);
  if (positions === undefined) {
    positions = new Map(table.columns.map((c, i) => [c.name, i]));
    positionsByName.set(table, positions);
  }
  const at = positions.get(name);
  if (at === undefined) throw columnNotFound(name, { relation: table.name });
  return at;
}

/** A cell a row leaves out (its column takes its DEFAULT); distinct from every JSON value, undefined included. */
const ABSENT: unique symbol = Symbol('absent');

/**
 * One row's JSON value per column (ABSENT where it gives none) and the positions it gives, in its
 * keys' order: givenColumns and proposedRows' reads of one row in one pass over its own keys
 * (unknown names refused as there, the first in key order), not a property lookup per column.
 */
function rowCells(table: TableDef, row: Readonly<Record<string, unknown>>): { given: number[]; cells: unknown[] } {
  const given: number[] = [];
  const cells = new Array<unknown>(table.columns.length).fill(ABSENT);
  for (const name in row) {
    if (!Object.hasOwn(row, name)) continue;
    const at = position(table, name);
    given.push(at);
    cells[at] = row[name];
  }
  return { given, cells };
}

/** proposedRows' conversion of one row's cells (rowCells), column by column in table order: the same values, errors and defaults. */
function cellsRow(run: DmlRun, table: TableDef, cells: readonly unknown[]): QValue[] {
  const columns = table.columns;
  const kinds = plainKindsOf(table);
  const values = new Array<QValue>(columns.length);
  let defaults: ((exec: ExecContext) => QValue)[] | null = null;
  for (let i = 0; i < columns.length; i++) {
    const json = cells[i];
    if (json === ABSENT) {
      defaults ??= defaultsOf(run, table);
      values[i] = defaults[i]!(run.exec());
      continue;
    }
    const plain = plainCell(kinds[i]!, json);
    values[i] = plain !== undefined ? plain : cellFromJson(run.ctx.types, columns[i]!, json, 0);
  }
  return values;
}

/** Positions of every column some row gives (unknown names refused), in the order rows first name them. */
function givenColumns(table: TableDef, rows: JsonInsert['rows']): number[] {
  const given: number[] = [];
  const seen = new Set<string>();
  // for...in over each row: no array of its keys per row (a bulk request has 10,000 rows); only
  // own properties count, as Object.keys lists them.
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (const name in row) {
      if (seen.has(name) || !Object.hasOwn(row, name)) continue;
      given.push(position(table, name));
      seen.add(name);
    }
  }
  return given;
}

function proposedRows(run: DmlRun, table: TableDef, rows: JsonInsert['rows']): QValue[][] {
  // The columns' defaults only once a row leaves one out (a row giving every column needs none).
  let defaults: ((exec: ExecContext) => QValue)[] | null = null;
  const { types } = run.ctx;
  const columns = table.columns;
  const width = columns.length;
  const kinds = plainKindsOf(table);
  // Loops and arrays sized once: a 10,000-row request converts 10,000 x width cells here.
  const out = new Array<QValue[]>(rows.length);
  for (let rowIndex = 0; rowIndex < rows.length; rowIndex++) {
    const row = rows[rowIndex]!;
    const values = new Array<QValue>(width);
    for (let i = 0; i < width; i++) {
      const column = columns[i]!;
      // The execution context only when a default is evaluated (run.exec() makes it once).
      if (!Object.hasOwn(row, column.name)) {
        defaults ??= defaultsOf(run, table);
        values[i] = defaults[i]!(run.exec());
        continue;
      }
      const json = row[column.name];
      const plain = plainCell(kinds[i]!, json);
      values[i] = plain !== undefined ? plain : cellFromJson(types, column, json, rowIndex);
    }
    out[rowIndex] = values;
  }
  return out;
}

/** Column types whose usual JSON value converts without the type system (plainCell); GENERAL: always through it. */
const GENERAL = 0;
const INT8 = 1;
const FLOAT8 = 2;
const TEXT = 3;
const INT4 = 4;
const BOOL = 5;

/** plainKindOf of each column, by table definition (a definition never changes: DDL makes a new one). */
const plainKinds = new WeakMap<TableDef, readonly number[]>();

function plainKindsOf(table: TableDef): readonly number[] {
  let kinds = plainKinds.get(table);
  if (kinds === undefined) {
    kinds = table.columns.map((c) => plainKindOf(c.type.name));
    plainKinds.set(table, kinds);
  }
  return kinds;
}

function plainKindOf(type: string): number {
  switch (type) {
    case 'int8':
      return INT8;
    case 'float8':
      return FLOAT8;
    case 'text':
      return TEXT;
    case 'int4':
      return INT4;
    case 'bool':
      return BOOL;
    default:
      return GENERAL;
  }
}

/**
 * What types.fromJson gives for the usual JSON value of a plain column type (a safe integer for
 * bigint, a number for double precision, a string for text, an integer in range for integer, a
 * boolean), undefined for anything else: that goes through types.fromJson, which converts or
 * refuses it with its own message. A bulk request converts 10,000 x width cells: this skips the
 * type system's dispatch and typmod step (none of these types has a modifier) for each.
 */
function plainCell(kind: number, json: unknown): QValue | undefined {
  switch (kind) {
    case INT8:
      return typeof json === 'number' && Number.isSafeInteger(json) ? BigInt(json) : undefined;
    case FLOAT8:
      return typeof json === 'number' ? json : undefined;
    case TEXT:
      return typeof json === 'string' ? json : undefined;
    case INT4:
      return typeof json === 'number' && Number.isInteger(json) && json >= -2147483648 && json <= 2147483647 ? json : undefined;
    case BOOL:
      return typeof json === 'boolean' ? json : undefined;
    default:
      return undefined;
  }
}

function cellFromJson(types: TypeSystem, column: ColumnDef, json: unknown, rowIndex: number): QValue {
  try {
    return types.fromJson(column.type, json);
  } catch (error) {
    if (!isSvcError(error)) throw error;
    throw new SvcError(
      error.code,
      `${error.message} (column "${column.name}", row ${rowIndex})`,
      { ...error.details, column: column.name, row: rowIndex },
      error,
    );
  }
}

const columnRef = (table: TableDef, at: number, offset = 0): Expr => ({
  kind: 'column',
  type: table.columns[at]!.type,
  index: offset + at,
  name: table.columns[at]!.name,
});

/** The unique index the conflict names and the SET c = EXCLUDED.c list (bindConflict's shape). */
function conflictOf(table: TableDef, spec: JsonConflict, given: readonly number[]): Conflict {
  let indexes = table.indexes.filter((i) => i.unique && i.kind === 'btree');
  const target = spec.columns.length === 0 && spec.action === 'update' ? table.primaryKey : spec.columns.map((n) => table.columns[position(table, n)]!.id);
  if (spec.action === 'update' && target.length === 0)
    throw invalid(`on_conflict update needs columns: "${table.name}" has no primary key`, { table: table.name });
  if (target.length > 0) {
    const match = indexes.find((i) => i.columnIds.length === target.length && target.every((id) => i.columnIds.includes(id)));
    if (!match) throw invalid('there is no unique or exclusion constraint matching the ON CONFLICT specification', { columns: spec.columns });
    indexes = [match];
  }
  if (spec.action === 'nothing') return { indexes, update: null };
  const keyIds = new Set(target);
  const positions = spec.updateColumns === null ? given.filter((p) => !keyIds.has(table.columns[p]!.id)) : spec.updateColumns.map((n) => position(table, n));
  // The proposed row follows the existing one in the row ON CONFLICT expressions see (EXCLUDED).
  const sets = positions.map((p) => ({ position: p, expr: columnRef(table, p, table.columns.length) }));
  return { indexes, update: { sets, where: null } };
}

function returningOf(table: TableDef, names: readonly string[]): { names: string[]; exprs: Expr[] } | null {
  if (names.length === 0) return null;
  const positions = names.length === 1 && names[0] === '*' ? table.columns.map((_c, i) => i) : names.map((n) => position(table, n));
  return { names: positions.map((p) => table.columns[p]!.name), exprs: positions.map((p) => columnRef(table, p)) };
}
