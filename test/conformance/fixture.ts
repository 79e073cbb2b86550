import { afterEach, beforeEach } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { compareKeys } from '../../core/key-encoding.js';
import type { RowChange, TxnOp } from '../../core/log-records.js';
import { lsn } from '../../core/units.js';
import { keys, PendingOverlay, rowRecordEffects, type WriteView } from '../../projections/index.js';
import { itemImage, itemKey, itemsTable, openStack, rowChange, tempDir, txn, type ItemRow, type Stack } from '../helpers/stack.js';

/** The table every conformance suite reads: items (id BIGINT PRIMARY KEY, name, score) with an index on score. */
export const TABLE_ID = 1;
export const SCORE_INDEX_ID = 7;
/** More rows than one read batch holds (query LIMITS.batchRows, the sequencer's scan batch: 1024 each). */
export const BASE_ROWS = 2_500;
export const SEQUENCE_NAME = 'items_id_seq';
export const SEQUENCE_VALUE = 4_242n;

/** A stack with the items table and BASE_ROWS committed rows, and the model of what it holds. */
export interface Fixture {
  readonly stack: Stack;
  readonly table: TableDef;
  /** The rows as the reader under test must see them (committed, then its own changes). */
  readonly model: Map<bigint, ItemRow>;
  /** Commits ops through the one writer and waits for them to be applied. */
  commit(ops: TxnOp[]): Promise<void>;
  close(): Promise<void>;
}

export async function openFixture(): Promise<Fixture> {
  const dir = await tempDir('svcdb-conformance-');
  const stack = await openStack(dir.dir);
  const table = itemsTable(TABLE_ID, { scoreIndexId: SCORE_INDEX_ID });
  const model = new Map<bigint, ItemRow>();
  const commit = async (ops: TxnOp[]): Promise<void> => {
    await stack.projections.sequencer.submit(async () => ({ record: txn(ops), result: null }));
  };
  await commit([
    { kind: 'put_table', table },
    { kind: 'sequence', name: SEQUENCE_NAME, lastValue: SEQUENCE_VALUE },
  ]);
  const rows: RowChange[] = [];
  for (let i = 0n; i < BigInt(BASE_ROWS); i++) {
    // Scores repeat (index order is score, then pk) and some are NULL.
    const row: ItemRow = { id: i, name: `row ${i}`, score: i % 13n === 0n ? null : Number(i % 10n) };
    model.set(i, row);
    rows.push(rowChange(table, 'insert', null, row));
  }
  await commit(rows);
  return {
    stack,
    table,
    model,
    commit,
    async close() {
      await stack.close();
      await dir.remove();
    },
  };
}

/**
 * A reader's own changes over the base rows: inserts below, between and above the committed keys,
 * updates that move a row within the score index, deletes (also of a row the change set inserted).
 * Applies them to the model and returns them as row changes with correct before images.
 */
export function ownChanges(fixture: Fixture): RowChange[] {
  const { table, model } = fixture;
  const out: RowChange[] = [];
  const put = (row: ItemRow): void => {
    const before = model.get(row.id) ?? null;
    out.push(rowChange(table, before ? 'update' : 'insert', before, row));
    model.set(row.id, row);
  };
  const del = (id: bigint): void => {
    const before = model.get(id);
    if (!before) throw new Error(`fixture: no row ${id} to delete`);
    out.push(rowChange(table, 'delete', before, null));
    model.delete(id);
  };
  put({ id: -5n, name: 'below', score: 3 });
  put({ id: 100_000n, name: 'above', score: 11 });
  put({ id: 7n, name: 'moved', score: 99 });
  put({ id: 1_030n, name: 'renamed', score: model.get(1_030n)!.score });
  put({ id: 26n, name: 'was null', score: 0 });
  del(1_024n);
  del(2n);
  del(BigInt(BASE_ROWS - 1));
  put({ id: 200_000n, name: 'gone again', score: 1 });
  del(200_000n);
  return out;
}

/** A pending overlay holding row changes, as a transaction stages them (query/txn/transaction.ts). */
export function overlayOf(fixture: Fixture, changes: readonly RowChange[]): PendingOverlay {
  const overlay = new PendingOverlay();
  const effects = rowRecordEffects(changes, (id) => fixture.stack.projections.catalog.table(id));
  if (effects) overlay.add(lsn(1), effects.ops);
  return overlay;
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Rows of the model as [pk, image] in key order. */
export function expectedRows(fixture: Fixture): [string, string][] {
  return [...fixture.model.values()]
    .map((row) => [itemKey(row.id), itemImage(fixture.table, row)] as const)
    .sort((a, b) => compareKeys(a[0], b[0]))
    .map(([pk, image]) => [hex(pk), hex(image)]);
}

/** Entries of the score index (index key, then pk) of the model, in key order. */
export function expectedIndexEntries(fixture: Fixture): Uint8Array[] {
  const index = fixture.stack.projections.catalog.table(TABLE_ID)!.btreeIndexes.find((i) => i.def.id === SCORE_INDEX_ID)!;
  return [...fixture.model.values()]
    .map((row) => {
      const entry = keys.indexEntryKey(SCORE_INDEX_ID, index.keyOf(itemImage(fixture.table, row)), itemKey(row.id));
      return entry.subarray(keys.ID_PREFIX_BYTES);
    })
    .sort(compareKeys);
}

/** The score index's key of one score. */
export function scoreKey(fixture: Fixture, score: number | null): Uint8Array {
  const index = fixture.stack.projections.catalog.table(TABLE_ID)!.btreeIndexes.find((i) => i.def.id === SCORE_INDEX_ID)!;
  return index.keyOf(itemImage(fixture.table, { id: 0n, name: null, score }));
}

/** Everything an async iterable of batches yields, flattened. */
export async function collect<T>(batches: AsyncIterable<T[]>): Promise<T[]> {
  const out: T[] = [];
  for await (const batch of batches) out.push(...batch);
  return out;
}

export { hex, itemKey };

/** Items of a sorted list within [gte, lt) (by key bytes), reversed on request. */
export function within<T>(items: readonly T[], keyOf: (item: T) => Uint8Array, bounds: { gte?: Uint8Array; lt?: Uint8Array; reverse?: boolean }): T[] {
  const out = items.filter((item) => {
    const key = keyOf(item);
    return (!bounds.gte || compareKeys(key, bounds.gte) >= 0) && (!bounds.lt || compareKeys(key, bounds.lt) < 0);
  });
  return bounds.reverse ? out.reverse() : out;
}

/**
 * The sequencer's WriteView, held open: a builder runs and waits until release() (it holds the
 * write lock meanwhile, so nothing else commits). `own` is committed first in several records
 * that are not awaited, so the view may see some of them still pending (appended, not applied).
 */
export async function holdWriteView(fixture: Fixture, own: readonly RowChange[]): Promise<{ view: WriteView; release(): Promise<void> }> {
  const { sequencer } = fixture.stack.projections;
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < own.length; i += 3) {
    writes.push(sequencer.submit(async () => ({ record: txn(own.slice(i, i + 3)), result: null })));
  }
  let letGo!: () => void;
  const released = new Promise<void>((resolve) => (letGo = resolve));
  const view = await new Promise<WriteView>((resolve, reject) => {
    writes.push(
      sequencer
        .submit(async (v) => {
          resolve(v);
          await released;
          return null;
        })
        .catch(reject),
    );
  });
  return {
    view,
    async release() {
      letGo();
      await Promise.all(writes);
    },
  };
}

/** A fresh fixture for each test and the implementation under test opened over it, closed after the test. */
export function fixturePerTest<O extends { close(): Promise<void> }>(
  openImpl: (fixture: Fixture, own: readonly RowChange[]) => Promise<O>,
): { readonly fixture: Fixture; open(own: readonly RowChange[]): Promise<O> } {
  let fixture: Fixture | null = null;
  let opened: O | null = null;
  beforeEach(async () => {
    fixture = await openFixture();
  });
  afterEach(async () => {
    await opened?.close();
    opened = null;
    await fixture?.close();
    fixture = null;
  });
  return {
    get fixture(): Fixture {
      return fixture!;
    },
    async open(own) {
      await opened?.close();
      opened = await openImpl(fixture!, own);
      return opened;
    },
  };
}
