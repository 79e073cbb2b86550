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
import { plainCell } from './plain-cells.js';
import { defaultsOf } from './row-source.js';
import { shapeOf } from './table-shape.js';

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
    const cells = new JsonCells(run, table);
    const proposed = one !== null ? [cellsRow(cells, table, one.cells)] : proposedRows(cells, table, request.rows);
    return writeProposed(run, table, proposed, conflict, returning);
  });
}

/** A column's position by its name (kept per definition: table-shape.ts); an unknown name is refused. */
function position(table: TableDef, name: string): number {
  const at = shapeOf(table).positions.get(name);
  if (at === undefined) throw columnNotFound(name, { relation: table.name });
  return at;
}

/** A cell a row leaves out (its column takes its DEFAULT); distinct from every JSON value, undefined included. */
const ABSENT: unique symbol = Symbol('absent');

/**
 * The cells of one statement's JSON rows, made column by column (the one-row path and the
 * several-row path alike). The columns' defaults are made only once a row leaves one out (a row
 * giving every column needs none), and the execution context only when a default is evaluated.
 */
class JsonCells {
  private readonly kinds: readonly number[];
  private defaults: ((exec: ExecContext) => QValue)[] | null = null;

  constructor(
    private readonly run: DmlRun,
    private readonly table: TableDef,
  ) {
    this.kinds = shapeOf(table).plainKinds;
  }

  /** The value of column `at` from its JSON cell (ABSENT: the DEFAULT); a refusal names the column and `rowIndex`. */
  cell(at: number, json: unknown, rowIndex: number): QValue {
    if (json === ABSENT) {
      this.defaults ??= defaultsOf(this.run, this.table);
      return this.defaults[at]!(this.run.exec());
    }
    const plain = plainCell(this.kinds[at]!, json);
    return plain !== undefined ? plain : cellFromJson(this.run.ctx.types, this.table.columns[at]!, json, rowIndex);
  }
}

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

/** One row's cells (rowCells) made its values, column by column in table order, as proposedRows makes each row's. */
function cellsRow(cells: JsonCells, table: TableDef, json: readonly unknown[]): QValue[] {
  const values = new Array<QValue>(table.columns.length);
  for (let i = 0; i < values.length; i++) values[i] = cells.cell(i, json[i], 0);
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

function proposedRows(cells: JsonCells, table: TableDef, rows: JsonInsert['rows']): QValue[][] {
  const columns = table.columns;
  const width = columns.length;
  // Loops and arrays sized once: a 10,000-row request converts 10,000 x width cells here.
  const out = new Array<QValue[]>(rows.length);
  for (let rowIndex = 0; rowIndex < rows.length; rowIndex++) {
    const row = rows[rowIndex]!;
    const values = new Array<QValue>(width);
    for (let i = 0; i < width; i++) {
      const name = columns[i]!.name;
      values[i] = cells.cell(i, Object.hasOwn(row, name) ? row[name] : ABSENT, rowIndex);
    }
    out[rowIndex] = values;
  }
  return out;
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
