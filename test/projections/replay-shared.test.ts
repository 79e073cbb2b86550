/**
 * On two cores replay's one worker and the main thread both prepare chunks (projections/replay-pool.ts
 * SharedPreparer): a chunk goes to the worker unless it has two queued, else the main thread
 * prepares it. Whoever prepares a chunk, it must be the chunk the worker alone would give, in the
 * order asked, and a new catalog must reach both.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeLogRecord } from '../../core/log-records.js';
import type { Lsn } from '../../core/units.js';
import type { LogEntry } from '../../log/index.js';
import { encodeTableDef } from '../../projections/catalog-codec.js';
import type { PreparedChunk } from '../../projections/replay-chunk.js';
import { InThreadPreparer, ReplayPool, SharedPreparer } from '../../projections/replay-pool.js';
import { itemImage, itemKey, itemsTable, txn } from '../helpers/stack.js';

let shared: SharedPreparer | null = null;

afterEach(async () => {
  await shared?.close();
  shared = null;
});

/** `count` records of 3 inserted rows each into `tableId`, from LSN `firstLsn`. */
function records(tableId: number, firstLsn: number, count: number): LogEntry[] {
  const table = itemsTable(tableId, { scoreIndexId: tableId * 10 });
  return Array.from({ length: count }, (_, r) => {
    const changes = [0, 1, 2].map((i) => {
      const id = BigInt((firstLsn + r) * 3 + i);
      return {
        kind: 'row' as const,
        tableId,
        op: 'insert' as const,
        key: itemKey(id),
        before: null,
        after: itemImage(table, { id, name: `n${id}`, score: Number(id % 7n) }),
      };
    });
    return { lsn: (firstLsn + r) as Lsn, payload: encodeLogRecord(txn(changes)) };
  });
}

function same(actual: PreparedChunk, expected: PreparedChunk): void {
  expect(actual.count).toBe(expected.count);
  expect(actual.rows).toBe(expected.rows);
  expect(Buffer.from(actual.batch.rep.subarray(0, actual.batch.end)).equals(Buffer.from(expected.batch.rep.subarray(0, expected.batch.end)))).toBe(true);
  expect([...actual.deltas]).toEqual([...expected.deltas]);
  expect(actual.nextSequence).toBe(expected.nextSequence);
}

describe('SharedPreparer', () => {
  it('prepares on the main thread once the worker has two chunks queued, and gives what one thread gives', async () => {
    shared = new SharedPreparer(ReplayPool.start(1));
    const reference = new InThreadPreparer();
    const catalog = [encodeTableDef(itemsTable(1, { scoreIndexId: 10 }))];
    shared.setCatalog(catalog);
    reference.setCatalog(catalog);
    const chunks = Array.from({ length: 6 }, (_, c) => records(1, 1 + c * 50, 50));
    // Asked all at once, as replay asks for the chunks ahead: the worker takes two, the main thread the rest until one is answered.
    const prepared = chunks.map((entries) => shared!.prepare(entries));
    expect(shared.preparedHere).toBe(4);
    for (let c = 0; c < chunks.length; c++) same(await prepared[c]!, await reference.prepare(chunks[c]!));

    // A new catalog reaches the worker and the main thread: table 2's rows are prepared by both.
    const next = [...catalog, encodeTableDef(itemsTable(2, { scoreIndexId: 20 }))];
    shared.setCatalog(next);
    reference.setCatalog(next);
    const later = Array.from({ length: 4 }, (_, c) => records(2, 1000 + c * 50, 50));
    const preparedLater = later.map((entries) => shared!.prepare(entries));
    expect(shared.preparedHere).toBe(6);
    for (let c = 0; c < later.length; c++) {
      const chunk = await preparedLater[c]!;
      expect(chunk.count).toBe(50);
      same(chunk, await reference.prepare(later[c]!));
    }
  });
});
