import { afterEach, describe, expect, it } from 'vitest';
import { decodeLogRecord } from '../../core/log-records.js';
import { decodeRow } from '../../core/row-codec.js';
import type { Lsn } from '../../core/units.js';
import { keys } from '../../projections/index.js';
import { dumpStore, itemImage, itemKey, itemsTable, openStack, rowChange, tempDir, txn, type Stack } from '../helpers/stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freshStack(): Promise<Stack> {
  const { dir, remove } = await tempDir();
  const stack = await openStack(dir);
  cleanups.push(remove, () => stack.close());
  return stack;
}

describe('tables projection', () => {
  it('applies catalog and row changes, with read-your-writes', async () => {
    const stack = await freshStack();
    const table = itemsTable(1, { scoreIndexId: 7 });
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
    expect(stack.projections.catalog.tableByName('default', 'public', 'items')?.def.id).toBe(1);

    const a = { id: 1n, name: 'a', score: 10 };
    const { lsn } = await stack.projections.sequencer.submit(async () => ({ record: txn([rowChange(table, 'insert', null, a)]), result: null }));
    // A row write is answered once durable; the read barrier knows its LSN before the answer, and a
    // read that begins there sees it applied.
    expect(stack.projections.readBarrier.acknowledged).toBeGreaterThanOrEqual(lsn!);
    await stack.projections.readBarrier.wait();
    expect(stack.projections.applied.lsn).toBeGreaterThanOrEqual(lsn!);
    expect(stack.projections.readBarrier.behind).toBe(false);
    const stored = await stack.store.get(keys.rowKey(1, itemKey(1n)));
    expect(stored && Buffer.from(stored).equals(Buffer.from(itemImage(table, a)))).toBe(true);

    const b = { id: 1n, name: 'a2', score: 20 };
    await stack.projections.sequencer.submit(async () => ({ record: txn([rowChange(table, 'update', a, b)]), result: null }));
    await stack.projections.readBarrier.wait();
    const entries = await collectIndex(stack, 7);
    expect(entries).toHaveLength(1);

    const stats = stack.projections.catalog.table(1)!.stats;
    expect(stats.rowCount).toBe(1);
    expect(stats.sizeBytes).toBeGreaterThan(0);
    expect(stats.indexSizeBytes).toBe(entries[0]!.length);

    await stack.projections.sequencer.submit(async () => ({ record: txn([rowChange(table, 'delete', b, null)]), result: null }));
    await stack.projections.readBarrier.wait();
    expect(await stack.store.get(keys.rowKey(1, itemKey(1n)))).toBeUndefined();
    expect(await collectIndex(stack, 7)).toHaveLength(0);
    expect(stack.projections.catalog.table(1)!.stats).toEqual({ rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 });
  });

  it('appends what the builder gave, every field, stamped with consecutive change-event sequences', async () => {
    const stack = await freshStack();
    const table = itemsTable(1);
    const given = [
      { ...txn([{ kind: 'put_table', table }]), txnId: 'ddl-1', tenant: 'tenant-a', timestampMicros: 1_700_000_000_000_001n },
      { ...txn([rowChange(table, 'insert', null, { id: 1n, name: 'a', score: 1 })]), txnId: 'row-1', timestampMicros: 1_700_000_000_000_002n },
      { ...txn([10n, 11n, 12n].map((id, i) => rowChange(table, 'insert', null, { id, name: 'b', score: i }))), txnId: 'row-3' },
      {
        ...txn([{ kind: 'sequence', name: 'items_id_seq', lastValue: 7n }, rowChange(table, 'insert', null, { id: 2n, name: 'c', score: 2 })]),
        txnId: 'seq-row',
      },
    ];
    const lsns: Lsn[] = [];
    for (const record of given) lsns.push((await stack.projections.sequencer.submit(async () => ({ record, result: null }))).lsn!);
    const read = [];
    for await (const batch of stack.log.read(lsns[0]!)) for (const entry of batch) read.push(decodeLogRecord(entry.payload));
    expect(read).toHaveLength(given.length);
    // A fresh log: the first record takes sequence 1, each op one more.
    let next = 1n;
    read.forEach((record, i) => {
      const { type, txnId, tenant, timestampMicros, ops } = given[i]!;
      expect(record).toEqual({ type, txnId, tenant, timestampMicros, ops, firstSequence: next });
      next += BigInt(ops.length);
    });
  });

  it('lets a writer see changes appended but not yet applied', async () => {
    const stack = await freshStack();
    const table = itemsTable(1);
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
    const writes = [];
    const seen: boolean[] = [];
    for (let i = 1n; i <= 50n; i++) {
      writes.push(
        stack.projections.sequencer.submit(async (view) => {
          // Every earlier insert was acknowledged to the log before this builder ran.
          seen.push((await view.getRow(1, itemKey(i - 1n))) !== undefined || i === 1n);
          const many = await view.getRows(1, [itemKey(i - 1n), itemKey(i), itemKey(1n)]);
          seen.push((many[0] !== undefined || i === 1n) && many[1] === undefined && (many[2] !== undefined || i === 1n));
          let count = 0;
          for await (const batch of view.rows(1)) count += batch.length;
          seen.push(count === Number(i - 1n));
          return { record: txn([rowChange(table, 'insert', null, { id: i, name: `n${i}`, score: Number(i) })]), result: null };
        }),
      );
    }
    await Promise.all(writes);
    expect(seen.every(Boolean)).toBe(true);
    await stack.projections.readBarrier.wait();
    expect(stack.projections.catalog.table(1)!.stats.rowCount).toBe(50);
    expect(stack.projections.sequencer.pendingKeys).toBe(0);
  });

  it('runs builders one at a time in submit order; one that fails or appends nothing hands the lock on', async () => {
    const stack = await freshStack();
    const table = itemsTable(1);
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
    const order: number[] = [];
    let running = 0;
    const submit = (n: number, outcome: 'insert' | 'fail' | 'nothing') =>
      stack.projections.sequencer.submit(async () => {
        running += 1;
        expect(running).toBe(1);
        order.push(n);
        await new Promise((resolve) => setImmediate(resolve));
        running -= 1;
        if (outcome === 'fail') throw new Error(`builder ${n} failed`);
        if (outcome === 'nothing') return null;
        return { record: txn([rowChange(table, 'insert', null, { id: BigInt(n), name: `n${n}`, score: n })]), result: n };
      });
    const outcomes = await Promise.allSettled([
      submit(1, 'insert'),
      submit(2, 'fail'),
      submit(3, 'nothing'),
      submit(4, 'insert'),
      submit(5, 'fail'),
      submit(6, 'insert'),
    ]);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value.result : null))).toEqual([1, null, null, 4, null, 6]);
    // The lock is free again: a later submit runs at once.
    expect((await submit(7, 'insert')).result).toBe(7);
    await stack.projections.readBarrier.wait();
    expect(stack.projections.catalog.table(1)!.stats.rowCount).toBe(4);
  });

  it('backfills an index added to a table with rows, and drops it again', async () => {
    const stack = await freshStack();
    const table = itemsTable(1);
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: BigInt(i), name: `r${i}`, score: i % 7 }));
    await stack.projections.sequencer.submit(async () => ({
      record: txn([{ kind: 'put_table', table }, ...rows.map((row) => rowChange(table, 'insert', null, row))]),
      result: null,
    }));
    const withIndex = itemsTable(1, { scoreIndexId: 9 });
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table: withIndex }]), result: null }));
    expect(await collectIndex(stack, 9)).toHaveLength(300);
    const indexBytes = stack.projections.catalog.table(1)!.stats.indexSizeBytes;
    expect(indexBytes).toBeGreaterThan(0);

    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
    expect(await collectIndex(stack, 9)).toHaveLength(0);
    expect(stack.projections.catalog.table(1)!.stats.indexSizeBytes).toBe(0);
  });

  it('answers row writes once durable, and a stop applies every answered write before it ends (the stored offset covers them)', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    let stack = await openStack(dir);
    const table = itemsTable(1);
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
    const answered = await Promise.all(
      Array.from({ length: 200 }, (_v, i) =>
        stack.projections.sequencer.submit(async () => ({
          record: txn([rowChange(table, 'insert', null, { id: BigInt(i), name: `r${i}`, score: i })]),
          result: null,
        })),
      ),
    );
    const last = Math.max(...answered.map((a) => a.lsn!));
    expect(stack.projections.readBarrier.acknowledged).toBe(last);
    // Stopped at once, with records answered and maybe not applied yet.
    await stack.close();
    // Reopened without catching up: what the store holds is what the stop left.
    stack = await openStack(dir, { start: false });
    cleanups.push(() => stack.close());
    expect(stack.projections.tables.offset).toBe(last);
    expect(stack.projections.catalog.table(1)!.stats.rowCount).toBe(200);
  });

  it('truncates and drops tables, and survives a restart with the same state', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    let stack = await openStack(dir);
    const t1 = itemsTable(1, { scoreIndexId: 11 });
    const t2 = itemsTable(2, { name: 'other' });
    const ops = [
      { kind: 'put_table' as const, table: t1 },
      { kind: 'put_table' as const, table: t2 },
    ];
    await stack.projections.sequencer.submit(async () => ({ record: txn(ops), result: null }));
    for (const table of [t1, t2]) {
      const inserts = Array.from({ length: 20 }, (_, i) => rowChange(table, 'insert', null, { id: BigInt(i), name: null, score: i }));
      await stack.projections.sequencer.submit(async () => ({ record: txn(inserts), result: null }));
    }
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'truncate', tableIds: [1] }]), result: null }));
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'drop_table', tableId: 2 }]), result: null }));
    await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'sequence', name: 'items_id_seq', lastValue: 42n }]), result: null }));
    await stack.projections.readBarrier.wait();
    const before = await dumpStore(stack.store);
    await stack.close();

    stack = await openStack(dir);
    cleanups.push(() => stack.close());
    expect(await dumpStore(stack.store)).toEqual(before);
    expect(stack.projections.catalog.table(1)!.stats.rowCount).toBe(0);
    expect(stack.projections.catalog.table(2)).toBeUndefined();
    expect(stack.projections.catalog.sequence('items_id_seq')).toBe(42n);
    let rows = 0;
    for await (const batch of stack.store.entries(keys.idRange(keys.KeySpace.Row, 2))) rows += batch.length;
    expect(rows).toBe(0);
  });

  it('decodes stored rows with the table definition', async () => {
    const stack = await freshStack();
    const table = itemsTable(3);
    await stack.projections.sequencer.submit(async () => ({
      record: txn([{ kind: 'put_table', table }, rowChange(table, 'insert', null, { id: 5n, name: 'five', score: null })]),
      result: null,
    }));
    const image = await stack.store.get(keys.rowKey(3, itemKey(5n)));
    expect(decodeRow(image!)).toEqual(
      new Map<number, unknown>([
        [1, 5n],
        [2, 'five'],
        [3, null],
      ]),
    );
  });
});

async function collectIndex(stack: Stack, indexId: number): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const batch of stack.store.entries(keys.idRange(keys.KeySpace.IndexEntry, indexId))) for (const [key] of batch) out.push(key);
  return out;
}
