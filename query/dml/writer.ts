/**
 * Validation and encoding of one table's row changes within a DML statement (statement-writer.ts
 * holds the statement's writers, its ops in order and its sequence values): NOT NULL, CHECK and
 * primary key checks against the store and the statement's own pending changes; unique-checks.ts
 * UniqueChecks makes the unique-index checks.
 */
import type { ColumnDef, IndexDef, TableDef } from '../../core/catalog.js';
import { isSvcError, type SvcError } from '../../core/errors.js';
import { compareKeys, decodeKey, encodeKey, encodeKeyWith } from '../../core/key-encoding.js';
import { encodeRow, encodeRowWith } from '../../core/row-codec.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import type { RowChange } from '../../core/log-records.js';
import type { WriteView } from '../../projections/index.js';
import type { QValue, TypeSystem } from '../types/contract.js';
import type { ForeignKeys } from './foreign-keys.js';
import { LIMITS } from '../limits.js';
import { checkViolation, keyDetail, notNullViolation, primaryKeyName, uniqueViolation } from './errors.js';
import { sameValue } from './same-value.js';
import { ByteSlab } from './byte-slab.js';
import { keyText } from '../../core/key-text.js';
import { shapeOf } from './table-shape.js';
import { allAfterLastKey, ascending } from './read-ahead.js';
import { UniqueChecks } from './unique-checks.js';

const { dmlPrefetchRowsMin } = LIMITS;

export interface CheckEval {
  readonly name: string;
  readonly eval: (row: readonly QValue[]) => QValue;
}

/** What a table's writer uses of its statement (statement-writer.ts StatementWriter). */
export interface WriterStatement {
  readonly view: WriteView;
  readonly types: TypeSystem;
  /** In a transaction: what the statement reads is tracked. */
  readonly inTransaction: boolean;
  /** The statement's foreign-key checks. */
  readonly fks: ForeignKeys;
  /** Adds a row op to the statement's ops (counted against its row limit). */
  push(op: RowChange): void;
  /** The engine's counts of how rows were written (statement-writer.ts WriteCounts); null: not counted (ALTER's backfill). */
  readonly counts: { knownNew: number } | null;
}

/** Validation and encoding of row changes for one table. */
export class TableWriter {
  readonly pkTypes: SqlType[];
  readonly pkPositions: number[] | null;
  /** The unique secondary indexes' checks: null when the table has none. */
  private readonly unique: UniqueChecks | null;
  /** A primary key and no other unique index or foreign key: a prefetched key settles an insert's reads (insertMany). */
  private readonly pkOnly: boolean;
  /** Positions of the NOT NULL columns (validate). */
  private readonly notNull: number[];
  /** Some constraint references a parent table (insert checks the parent). */
  private readonly hasForeignKeys: boolean;
  /** The primary key's values of the row being keyed (keyOf): one array for every row, encodeKey keeps none. */
  private readonly pkScratch: SqlValue[];
  /** pk keyText -> image (null: deleted) for rows changed by this statement; read through `pending`. */
  private readonly pendingMap = new Map<string, Uint8Array | null>();
  /**
   * Rows inserted by insertMany that are not in pendingMap yet: keys that were all new, distinct
   * and first in this statement, so no check needed them by text. A bulk insert pays no key
   * string and no map entry per row unless something later in the statement asks.
   */
  private deferred: { readonly keys: readonly Uint8Array[]; readonly images: Uint8Array[] }[] = [];
  private nextRowId: bigint | null = null;

  private compiledChecks: CheckEval[] | null = null;

  constructor(
    readonly def: TableDef,
    private readonly statement: WriterStatement,
    private readonly checksOf: () => CheckEval[],
  ) {
    // Shared by every statement's writer of this definition: read, never changed.
    const shape = shapeOf(def);
    this.pkPositions = shape.pkPositions;
    this.pkTypes = shape.pkTypes;
    this.unique = shape.uniques.length > 0 ? new UniqueChecks(shape.uniques, this, statement.view) : null;
    this.pkOnly = shape.pkOnly;
    this.notNull = shape.notNull;
    this.hasForeignKeys = shape.hasForeignKeys;
    this.pkScratch = new Array<SqlValue>(this.pkPositions?.length ?? 0);
  }

  /** pk keyText -> image (null: deleted) for rows changed by this statement. */
  get pending(): Map<string, Uint8Array | null> {
    if (this.deferred.length > 0) {
      const runs = this.deferred;
      this.deferred = [];
      for (const { keys, images } of runs) for (let i = 0; i < images.length; i++) this.pendingMap.set(keyText(keys[i]!), images[i]!);
    }
    return this.pendingMap;
  }

  get columns(): readonly ColumnDef[] {
    return this.def.columns;
  }

  keyOf(values: readonly QValue[]): Uint8Array {
    const positions = this.pkPositions!;
    const scratch = this.pkScratch;
    for (let i = 0; i < positions.length; i++) scratch[i] = values[positions[i]!] as SqlValue;
    return encodeKey(this.pkTypes, scratch);
  }

  /** keyOf, the key copied into the slab (no array of its own per key). */
  private slabKeyOf(values: readonly QValue[]): Uint8Array {
    const positions = this.pkPositions!;
    const scratch = this.pkScratch;
    for (let i = 0; i < positions.length; i++) scratch[i] = values[positions[i]!] as SqlValue;
    return encodeKeyWith(this.pkTypes, scratch, this.slab.copyPrefix);
  }

  /** The rows' primary keys (slabKeyOf): a loop with nothing after it (docs/decisions.md, "Loops that run long in a function's first call"). */
  private slabKeys(rows: readonly (readonly QValue[])[]): Uint8Array[] {
    const keys = new Array<Uint8Array>(rows.length);
    for (let i = 0; i < rows.length; i++) keys[i] = this.slabKeyOf(rows[i]!);
    return keys;
  }

  /** Where insertMany keeps its rows' keys and images (views of shared chunks: less for the GC to copy). */
  private readonly slab = new ByteSlab();

  /** Images read ahead by prefetch (null: no such row), keyed by keyText; made by the first read-ahead. */
  private knownImages: Map<string, Uint8Array | null> | null = null;
  private get known(): Map<string, Uint8Array | null> {
    return (this.knownImages ??= new Map());
  }

  /** The current image of a key as this statement sees it (its own changes first). */
  async current(key: Uint8Array): Promise<Uint8Array | undefined> {
    const k = keyText(key);
    const seen = this.seen(k);
    return seen !== undefined ? (seen ?? undefined) : this.statement.view.getRow(this.def.id, key);
  }

  /** What this statement knows of a key without reading: its own change or the prefetched image (null: none), undefined: unknown. */
  private seen(k: string): Uint8Array | null | undefined {
    const pending = this.pending.get(k);
    return pending !== undefined ? pending : this.knownImages?.get(k);
  }

  /**
   * Reads ahead, for many proposed rows, everything their checks will look up: whether their
   * primary keys exist (one getMany), which rows hold their unique-index keys (probes run
   * concurrently) and whether their foreign-key parents exist (one getMany per parent table).
   * Only the state before this statement is cached; this statement's own changes (`pending`)
   * are always consulted first, so results are exactly those of the per-row reads.
   * Prefetch is an optimisation only: on any error the per-row reads stand in.
   * `assigned` (UPDATE): the column positions the statement sets; checks of other columns do
   * not run, so nothing is read for them.
   */
  async prefetch(rows: readonly (readonly QValue[])[], assigned?: ReadonlySet<number>): Promise<void> {
    if (rows.length < dmlPrefetchRowsMin) return;
    const touches = (positions: readonly number[]): boolean => !assigned || positions.some((p) => assigned.has(p));
    try {
      await Promise.all([
        this.pkPositions && touches(this.pkPositions) ? this.prefetchKeys(rows.map((r) => this.keyOf(r))) : Promise.resolve(),
        this.unique ? this.unique.prefetch(rows, touches) : Promise.resolve(),
        this.statement.fks.prefetchParents(this.def, rows, assigned),
      ]);
    } catch (error) {
      // Fall back to point reads (they fail the same way on a real error); a bug is not hidden.
      if (!isSvcError(error)) throw error;
    }
  }

  /** Reads the images of many primary keys in one round trip into the prefetch cache. */
  async prefetchKeys(keys: readonly Uint8Array[]): Promise<void> {
    const fresh = new Map<string, Uint8Array>();
    for (const key of keys) {
      const k = keyText(key);
      if (!this.known.has(k) && !this.pending.has(k)) fresh.set(k, key);
    }
    if (fresh.size === 0) return;
    const images = await this.statement.view.getRows(this.def.id, [...fresh.values()]);
    let i = 0;
    for (const k of fresh.keys()) this.known.set(k, images[i++] ?? null);
  }

  private async allocateRowId(): Promise<Uint8Array> {
    if (this.nextRowId === null) {
      this.nextRowId = 1n;
      for await (const batch of this.statement.view.rows(this.def.id, { reverse: true })) {
        const last = batch[0];
        if (last) this.nextRowId = (decodeKey(this.pkTypes, last[0])[0] as bigint) + 1n;
        break;
      }
    }
    const id = this.nextRowId;
    this.nextRowId += 1n;
    return encodeKey(this.pkTypes, [id]);
  }

  private validate(values: readonly QValue[]): void {
    const notNull = this.notNull;
    for (let i = 0; i < notNull.length; i++) {
      const at = notNull[i]!;
      if (values[at] === null) throw notNullViolation(this.def.name, this.def.columns[at]!.name);
    }
    this.compiledChecks ??= this.checksOf();
    for (const check of this.compiledChecks) if (check.eval(values) === false) throw checkViolation(this.def.name, check.name);
  }

  async insert(values: QValue[]): Promise<Uint8Array> {
    this.validate(values);
    const key = this.pkPositions ? this.keyOf(values) : await this.allocateRowId();
    const k = keyText(key);
    if (this.pkPositions) {
      // Most rows of a bulk insert were prefetched: no read, no await.
      const seen = this.seen(k);
      const exists = seen !== undefined ? seen !== null : await this.stored(key);
      if (exists) throw this.pkViolation(values);
    }
    if (this.unique) await this.unique.check(values, key, null);
    if (this.hasForeignKeys) await this.statement.fks.checkChild(this.def, values);
    const after = encodeRow(this.def.columns, values as SqlValue[]);
    this.record(key, null, after, values, k);
    this.statement.push({ kind: 'row', tableId: this.def.id, op: 'insert', key, before: null, after });
    return key;
  }

  /**
   * Whether a key this statement has not changed or read ahead exists (stored or pending). A key
   * that sorts after the table's row-key bound does not, without a read: single-row inserts of
   * ascending ids (a serial, a timestamp-ordered id) skip a LevelDB lookup each. Not in a
   * transaction, whose view has no bound (its reads are tracked).
   */
  private async stored(key: Uint8Array): Promise<boolean> {
    const view = this.statement.view;
    if (!this.statement.inTransaction && view.rowKeyBound) {
      const bound = await view.rowKeyBound(this.def.id);
      if (bound === null || compareKeys(key, bound) > 0) return false;
    }
    return (await view.getRow(this.def.id, key)) !== undefined;
  }

  /**
   * insert() of one row when every check it makes is settled without a read: a table whose only
   * constraint to read for is its primary key (pkOnly), outside a transaction, a key this
   * statement has not seen that sorts after the table's known row-key bound (so no row has it).
   * The same checks and errors (with a new key only validate() can refuse the row); returns false,
   * having changed and evaluated nothing, when a read would be needed (insert() then runs). A single-row insert of a new
   * highest id (a serial, a timestamp-ordered id) so takes no promise and no async frame here:
   * insert(), stored() and rowKeyBound() were three per row, most of the allocation per request.
   */
  insertKnownNew(values: QValue[]): boolean {
    const view = this.statement.view;
    const positions = this.pkPositions;
    if (!this.pkOnly || positions === null || this.statement.inTransaction || view.knownRowKeyBound === undefined) return false;
    const bound = view.knownRowKeyBound(this.def.id);
    if (bound === undefined) return false;
    // A NULL key column is validate()'s refusal, which insert() reports before keying the row.
    for (let i = 0; i < positions.length; i++) if (values[positions[i]!] === null) return false;
    const key = this.keyOf(values);
    if (bound !== null && compareKeys(key, bound) <= 0) return false;
    const k = keyText(key);
    if (this.seen(k) !== undefined) return false;
    // Decided: the key is new, so validate() is the only check left to refuse the row (run once, as insert() runs it).
    this.validate(values);
    const after = encodeRow(this.def.columns, values as SqlValue[]);
    this.record(key, null, after, values, k);
    this.statement.push({ kind: 'row', tableId: this.def.id, op: 'insert', key, before: null, after });
    const counts = this.statement.counts;
    if (counts !== null) counts.knownNew += 1;
    return true;
  }

  /**
   * Inserts rows in order with exactly the checks and errors of insert() row by row. With only a
   * primary key to check, the keys are encoded once and read in one getMany, and each row is
   * written without a promise; otherwise every row goes through insert() after a prefetch.
   * `inserted` runs after each row is written (RETURNING), as it would after each insert().
   */
  async insertMany(rows: readonly QValue[][], inserted?: (values: QValue[]) => void): Promise<void> {
    const read = this.pkOnly && rows.length >= dmlPrefetchRowsMin ? await this.readPrimaryKeys(rows) : null;
    if (read === null) await this.prefetch(rows);
    const fresh = read !== null && read.texts === null ? { keys: read.keys, images: [] as Uint8Array[] } : null;
    if (fresh) this.deferred.push(fresh);
    for (let i = 0; i < rows.length; i++) {
      const values = rows[i]!;
      if (read === null) await this.insert(values);
      else if (fresh) fresh.images.push(this.insertNew(values, read.keys[i]!, read.images[i] ?? null));
      else this.insertRead(values, read.keys[i]!, read.texts![i]!, read.images[i] ?? null);
      if (inserted) inserted(values);
    }
  }

  /**
   * The rows' primary keys and their stored images (undefined: none), read in one getMany, and
   * their keyText — null when the keys ascend strictly and this statement has changed no row of
   * the table yet: then no key can meet another, and no check needs a text. Null when the keys
   * could not be read (the per-row reads then stand in).
   */
  private async readPrimaryKeys(
    rows: readonly (readonly QValue[])[],
  ): Promise<{ keys: Uint8Array[]; texts: string[] | null; images: (Uint8Array | undefined)[] } | null> {
    try {
      const keys = this.slabKeys(rows);
      const sorted = ascending(keys);
      const texts = this.pendingMap.size === 0 && this.deferred.length === 0 && sorted ? null : keys.map(keyText);
      // Not in a transaction: reading the last row there would track the table's whole range as read.
      const skip = !this.statement.inTransaction && (await allAfterLastKey(this.statement.view, this.def.id, keys, sorted));
      const images = skip ? new Array<undefined>(keys.length) : await this.statement.view.getRows(this.def.id, keys);
      return { keys, texts, images };
    } catch (error) {
      if (!isSvcError(error)) throw error;
      return null;
    }
  }

  /**
   * insert() of a row whose stored image (null: none) was read ahead, for a table with nothing
   * else to read (pkOnly): the same checks in the same order, this statement's own changes first.
   */
  private insertRead(values: QValue[], key: Uint8Array, k: string, stored: Uint8Array | null): void {
    const own = this.pending.get(k);
    const seen = own !== undefined ? own : stored;
    this.validate(values);
    if (seen !== null) throw this.pkViolation(values);
    const after = encodeRowWith(this.def.columns, values as SqlValue[], this.slab.copyPrefix);
    this.pending.set(k, after);
    this.statement.push({ kind: 'row', tableId: this.def.id, op: 'insert', key, before: null, after });
  }

  /** insertRead of a row whose key is new to this statement and distinct from the others of its insertMany: returns its image. */
  private insertNew(values: QValue[], key: Uint8Array, stored: Uint8Array | null): Uint8Array {
    this.validate(values);
    if (stored !== null) throw this.pkViolation(values);
    const after = encodeRowWith(this.def.columns, values as SqlValue[], this.slab.copyPrefix);
    this.statement.push({ kind: 'row', tableId: this.def.id, op: 'insert', key, before: null, after });
    return after;
  }

  async update(key: Uint8Array, before: Uint8Array, oldValues: readonly QValue[], values: QValue[]): Promise<void> {
    this.validate(values);
    const newKey = this.pkPositions ? this.keyOf(values) : key;
    const keyChanged = keyText(newKey) !== keyText(key);
    const changed = (positions: readonly number[]): boolean => positions.some((p) => !sameValue(oldValues[p] ?? null, values[p] ?? null));
    if (keyChanged && (await this.current(newKey))) throw this.pkViolation(values);
    if (this.unique) await this.unique.check(values, newKey, key, changed);
    if (this.statement.fks.childColumnsChanged(this.def, changed)) await this.statement.fks.checkChild(this.def, values);
    await this.statement.fks.onParentUpdate(this.def, oldValues, values, changed);
    const after = encodeRow(this.def.columns, values as SqlValue[]);
    this.forget(key, oldValues);
    if (keyChanged) {
      this.record(key, before, null, null);
      this.statement.push({ kind: 'row', tableId: this.def.id, op: 'delete', key, before, after: null });
      this.record(newKey, null, after, values);
      this.statement.push({ kind: 'row', tableId: this.def.id, op: 'insert', key: newKey, before: null, after });
    } else {
      this.record(key, before, after, values);
      this.statement.push({ kind: 'row', tableId: this.def.id, op: 'update', key, before, after });
    }
  }

  async delete(key: Uint8Array, before: Uint8Array, values: readonly QValue[]): Promise<boolean> {
    if (this.pending.get(keyText(key)) === null) return false;
    this.forget(key, values);
    this.record(key, before, null, null);
    this.statement.push({ kind: 'row', tableId: this.def.id, op: 'delete', key, before, after: null });
    await this.statement.fks.onParentDelete(this.def, values);
    return true;
  }

  private record(key: Uint8Array, _before: Uint8Array | null, after: Uint8Array | null, values: readonly QValue[] | null, k = keyText(key)): void {
    this.pending.set(k, after);
    if (values && this.unique) this.unique.record(values, k);
  }

  private forget(key: Uint8Array, values: readonly QValue[]): void {
    if (this.unique) this.unique.forget(keyText(key), values);
  }

  /** ON CONFLICT: the existing row whose key on `index` equals the proposed row's. */
  async conflicting(index: IndexDef, values: readonly QValue[]): Promise<Uint8Array | null> {
    if (index.primary) {
      const key = this.keyOf(values);
      return (await this.current(key)) ? key : null;
    }
    return this.unique ? this.unique.conflicting(index, values) : null;
  }

  /** The primary key's violation for a proposed row (built only when thrown). */
  private pkViolation(values: readonly QValue[]): SvcError {
    return uniqueViolation(this.def.name, primaryKeyName(this.def), this.describeKey(this.pkPositions!, values));
  }

  /** A violation's key text, `(a, b)=(1, x)` (errors.ts keyDetail); unique-checks.ts and foreign-keys.ts name keys through it. */
  describeKey(positions: readonly number[], values: readonly QValue[]): string {
    return keyDetail(this.def, this.statement.types, positions, values);
  }
}
