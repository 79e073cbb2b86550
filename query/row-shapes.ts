import type { ColumnId, TableDef } from '../core/catalog.js';
import { assert } from '../core/errors.js';
import { setOwn } from '../core/json-exact.js';
import { decodeRowInto } from '../core/row-codec.js';
import type { SqlValue } from '../core/values.js';
import { MEMO_OVERHEAD_BYTES, stringBytes, type CachedRow } from '../projections/index.js';
import type { JsonRow } from './result.js';
import type { TypeSystem } from './types/contract.js';

/**
 * Columns of one table definition, by name, as a JSON-ready row: each stored value decoded by its
 * column id (the column's missing value where the image predates it), converted by the column
 * type's toJson, under the column's own name. This is what GET /tables/{t}/rows/{id} answers and what
 * SQL's RowConverter gives for `SELECT <those columns> FROM t` (fast-point.ts checks a plan against
 * it before sharing it). One object per (table definition, names) while the registry holds it: the
 * point-read cache's memo owner, so every reader of the same shape shares what was made of a row.
 */
export class RowShape {
  constructor(
    readonly table: TableDef,
    readonly ids: readonly ColumnId[],
    readonly missing: readonly SqlValue[],
    readonly names: readonly string[],
    readonly toJson: readonly ((value: SqlValue) => unknown)[],
  ) {}

  /** The row of a stored image, as a new object. */
  shape(image: Uint8Array): JsonRow {
    const row = decodeRowInto(image, this.ids, this.missing);
    const out: JsonRow = {};
    for (let i = 0; i < this.names.length; i++) setOwn(out, this.names[i]!, this.toJson[i]!(row[i] ?? null));
    return out;
  }
}

/** Distinct column lists remembered per table (select= variants, statements' column lists); others are built per use. */
const SHAPES_PER_TABLE_MAX = 16;

/**
 * The RowShapes of every table definition, per column list: an ALTER makes a new TableDef (and a
 * tenant's tables are its own TableDefs), so a shape never outlives what its text means.
 */
export class RowShapes {
  private readonly byTable = new WeakMap<TableDef, Map<string, RowShape>>();

  constructor(private readonly types: TypeSystem) {}

  /** The shape of `names` (each a column of `table`) in `table`: the same object for the same list while held. */
  of(table: TableDef, names: readonly string[]): RowShape {
    let shapes = this.byTable.get(table);
    if (shapes === undefined) this.byTable.set(table, (shapes = new Map()));
    const key = names.join('\u0000');
    const known = shapes.get(key);
    if (known !== undefined) return known;
    const columns = names.map((name) => {
      const column = table.columns.find((c) => c.name === name);
      assert(column !== undefined, `RowShapes: "${name}" is not a column of ${table.name} (the caller checks)`);
      return column;
    });
    const types = this.types;
    const shape = new RowShape(
      table,
      columns.map((c) => c.id),
      columns.map((c) => c.missingValue),
      [...names],
      columns.map((c) => (value: SqlValue) => (value === null ? null : types.toJson(c.type, value))),
    );
    if (shapes.size < SHAPES_PER_TABLE_MAX) shapes.set(key, shape);
    return shape;
  }
}

/**
 * Text written around a row's JSON text to make a whole answer (GET row's `{"data":` and `}`; a
 * point SELECT's frame with the array's brackets). Compared by identity: keep one object per answer kind.
 */
export interface AnswerWrap {
  readonly before: string;
  readonly after: string;
}

/** No text around the row's: the row's text is the answer (readText without a wrap). */
export const NO_WRAP: AnswerWrap = Object.freeze({ before: '', after: '' });

/**
 * What the readers of one RowShape keep with a cached row (its memo slot, owner: the shape): the whole
 * answers made around the row's JSON text as `toText` writes it, one per wrap (GET row's and POST
 * /query's: two routes reading the same rows each find their answer, the row decoded, converted and
 * written once), and the row itself, frozen and shared, once a reader asks for it (a point SELECT's
 * result carries it; GET row sends the text alone). Two wraps (two fields each, no arrays: this is
 * kept per cached row); a third replaces the one made first. The row's text is not kept apart: a new
 * wrap's answer takes it out of the first answer (one more copy, once per wrap and row).
 */
export class SharedRowMemo {
  private wrapB: AnswerWrap | null = null;
  private answerB = '';

  private constructor(
    readonly toText: (row: JsonRow) => string,
    private row: JsonRow | null,
    private wrapA: AnswerWrap,
    private answerA: string,
  ) {}

  /**
   * The memo of `row` with its first answer (`wrap` around toText's text of it), kept with `entry`
   * under `owner` (replacing what was there); with `keepRow` the row is kept too (frozen here).
   */
  static made(toText: (row: JsonRow) => string, row: JsonRow, wrap: AnswerWrap, entry: CachedRow, owner: object, keepRow: boolean): SharedRowMemo {
    const answer = wrap.before + toText(row) + wrap.after;
    const memo = new SharedRowMemo(toText, keepRow ? Object.freeze(row) : null, wrap, answer);
    entry.remember(owner, memo, memo.bytes());
    return memo;
  }

  /**
   * The row, frozen and shared: kept, or made now from `entry`'s image by `shape` (the entry this
   * memo is kept with under `shape`: its image is the one the text was made from; a write makes a
   * new entry) and kept (the entry's count is updated).
   */
  rowOf(shape: RowShape, entry: CachedRow): JsonRow {
    if (this.row !== null) return this.row;
    const row = Object.freeze(shape.shape(entry.image!));
    this.row = row;
    entry.remember(shape, this, this.bytes());
    return row;
  }

  /**
   * The whole answer for `wrap`: kept, or made and kept now (the entry's count is then updated
   * through `entry`, the CachedRow this memo is kept with under `owner`). Sent as it is, it is
   * flattened once by its first send (or by the count's look at its characters) and stays flat.
   */
  answerOf(wrap: AnswerWrap, entry: CachedRow, owner: object): string {
    if (wrap === this.wrapA) return this.answerA;
    if (wrap === this.wrapB) return this.answerB;
    const first = this.answerA;
    const text = first.slice(this.wrapA.before.length, first.length - this.wrapA.after.length);
    const answer = wrap.before + text + wrap.after;
    // B is the newer slot: with both taken, A (made first) goes and B takes its place.
    if (this.wrapB !== null) {
      this.wrapA = this.wrapB;
      this.answerA = this.answerB;
    }
    this.wrapB = wrap;
    this.answerB = answer;
    entry.remember(owner, this, this.bytes());
    return answer;
  }

  /**
   * What this memo holds, counted against the point-read cache's bound: each answer, the memo, and
   * the frozen row when kept (about what its text says again: counted as the first answer's
   * characters and an object, as fast-point's memo counted its row).
   */
  private bytes(): number {
    let bytes = stringBytes(this.answerA) + ANSWER_OVERHEAD_BYTES + MEMO_OVERHEAD_BYTES;
    if (this.wrapB !== null) bytes += stringBytes(this.answerB) + ANSWER_OVERHEAD_BYTES;
    if (this.row !== null) bytes += stringBytes(this.answerA) + MEMO_OVERHEAD_BYTES;
    return bytes;
  }
}

/** A kept answer besides its characters: the string's header and the cons string it was joined as. */
const ANSWER_OVERHEAD_BYTES = 40;
