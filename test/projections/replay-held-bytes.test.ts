// Replay's held batches (replay-bulk.ts): the bound counts the memory they really keep alive, and
// finish() reads the store into memory only within what the bound leaves (else it takes LevelDB's
// recovery). Both found by the eighth session's review: a chunk of many updates of few rows kept its
// whole buffer while `end` was counted, and finish() copied a store of any size after ingests.
import { describe, expect, it } from 'vitest';
import { type KvOp, type StateStore } from '../../projections/index.js';
import { BulkLoader } from '../../projections/replay-bulk.js';
import { sortedBatch } from '../../projections/replay-sort.js';
import { type BulkHost, bulkHostOf, openScratchStore } from '../../projections/state-store.js';
import { pack, storesClosedAfterEach } from '../helpers/packed-stores.js';

const { opened } = storesClosedAfterEach('svcdb-held-bytes-');

function loader(host: BulkHost, heldBytesMax: number): BulkLoader {
  return new BulkLoader(host, {
    ingestBytesMin: Number.MAX_SAFE_INTEGER,
    pendingBytesMax: Number.MAX_SAFE_INTEGER,
    levelZeroFilesMax: 6,
    heldBytesMax,
    tableBytes: 64 * 1024,
  });
}

async function entries(store: StateStore): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for await (const batch of store.entries({}))
    for (const [key, value] of batch) all.set(Buffer.from(key).toString('latin1'), Buffer.from(value).toString('hex'));
  return all;
}

describe('replay: held batches within their bound', () => {
  it('a chunk of many updates of a few rows keeps only its entries, and the bound counts the buffers kept alive', async () => {
    const store = await opened(openScratchStore);
    const host = bulkHostOf(store)!;
    const bound = 200_000;
    const bulk = loader(host, bound);
    // 40 chunks of 2,000 updates of 3 rows (a hot-row UPDATE log): each sorted batch was sized for 2,000 ops (~0.6 MB).
    for (let c = 0; c < 40; c++) {
      const ops = Array.from({ length: 2000 }, (_, n): KvOp => ({ type: 'put', key: Buffer.from(`row${(c + n) % 3}`), value: Buffer.alloc(300, n % 251) }));
      await bulk.append(sortedBatch(pack(ops)));
      expect(bulk.heldMemoryBytes()).toBeLessThanOrEqual(bound);
    }
    expect(bulk.holding).toBe(true);
    await bulk.finish();
    // The last update of each row (n = 1999, 1998, 1997 of the last chunk) is what the store holds.
    const state = await entries(store);
    for (const [row, n] of [
      ['row0', 1998],
      ['row1', 1999],
      ['row2', 1997],
    ] as const)
      expect(state.get(row)).toBe(Buffer.alloc(300, n % 251).toString('hex'));
  });

  it('finish() takes LevelDB recovery when the store ingested before holds more than the bound leaves, with the same state', async () => {
    const store = await opened(openScratchStore);
    const host = bulkHostOf(store)!;
    const bound = 2 * 1024 * 1024;
    const bulk = loader(host, bound);
    let key = 0;
    for (let c = 0; c < 24; c++) {
      // ~1.5 MB held, then a barrier ingests it.
      const ops = Array.from({ length: 1500 }, (): KvOp => ({
        type: 'put',
        key: Buffer.from(`k${String(key++).padStart(8, '0')}`),
        value: Buffer.alloc(1000, key % 251),
      }));
      await bulk.append(sortedBatch(pack(ops)));
      if (c < 23) await bulk.ingest();
    }
    expect(bulk.holding).toBe(true);
    const base = process.memoryUsage().arrayBuffers;
    let peak = base;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 1);
    try {
      await bulk.finish();
    } finally {
      clearInterval(timer);
    }
    // ~36 MB of state: read into memory whole, it went far past the bound.
    expect(peak - base).toBeLessThan(3 * bound);
    const state = await entries(store);
    expect(state.size).toBe(24 * 1500);
    expect(state.get('k00035999')).toBe(Buffer.alloc(1000, 36000 % 251).toString('hex'));
  });
});
