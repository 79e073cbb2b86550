import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { type KvOp, openStateStore } from '../../projections/index.js';
import { BulkLoader, STAGING_DIR } from '../../projections/replay-bulk.js';
import { sortedBatch } from '../../projections/replay-sort.js';
import { bulkHostOf, openScratchStore, packedBatch } from '../../projections/state-store.js';
import { contents, pack, storesClosedAfterEach } from '../helpers/packed-stores.js';

/** Limits under which nothing is ingested until ingest() is called. */
const NEVER = { ingestBytesMin: Number.MAX_SAFE_INTEGER, pendingBytesMax: Number.MAX_SAFE_INTEGER, levelZeroFilesMax: 6 };

const { opened } = storesClosedAfterEach('svcdb-bulk-');

/** A deterministic run of batches: puts, overwrites and deletes of a small key set, values of every size class. */
function batches(seed: number): KvOp[][] {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  // Values around LevelDB's 32 KiB log blocks: records split in fragments, blocks ending with padding.
  const sizes = [0, 1, 5, 100, 127, 128, 32_768 - 7 - 12 - 3, 32_768 - 20, 32_768, 70_000, 200_000];
  return Array.from({ length: 12 }, () =>
    Array.from({ length: 1 + next(40) }, (): KvOp => {
      const key = Buffer.from(`k${next(60)}`);
      if (next(5) === 0) return { type: 'del', key };
      const value = Buffer.alloc(sizes[next(sizes.length)]!, next(256));
      return { type: 'put', key, value };
    }),
  );
}

describe('replay bulk load (LevelDB write-ahead files recovered at reopen)', () => {
  it('leaves the state ordinary batches leave, bulk and ordinary writes of the same keys interleaved', async () => {
    for (const seed of [1, 2, 3]) {
      const reference = await opened(openStateStore);
      const bulked = await opened(openScratchStore);
      // A small bound: some ingests come from it, the others at the points replay ingests.
      const loader = new BulkLoader(bulkHostOf(bulked)!, { ingestBytesMin: 150_000, pendingBytesMax: 150_000, levelZeroFilesMax: 6 });
      let i = 0;
      for (const ops of batches(seed)) {
        await packedBatch(reference, pack(ops))();
        if (i++ % 3 === 2) {
          // An ordinary batch (a barrier record's apply, a vector chunk): what was bulk-loaded goes in first.
          await loader.ingest();
          await packedBatch(bulked, pack(ops))();
        } else await loader.append(sortedBatch(pack(ops)));
      }
      await loader.ingest();
      expect(await contents(bulked)).toEqual(await contents(reference));
      // The state lasts: closed and opened again (as after the rebuild's swap), nothing is recovered twice or lost.
      await bulkHostOf(bulked)!.reopen();
      expect(await contents(bulked)).toEqual(await contents(reference));
    }
  });

  it('appends wait for ingest() to be read; ordinary keys written meanwhile stay as they are', async () => {
    const store = await opened(openScratchStore);
    const loader = new BulkLoader(bulkHostOf(store)!, NEVER);
    await store.write([{ type: 'put', key: Buffer.from('meta'), value: Buffer.from('1') }]);
    await loader.append(sortedBatch(pack([{ type: 'put', key: Buffer.from('row'), value: Buffer.from('r') }])));
    await store.write([{ type: 'put', key: Buffer.from('meta'), value: Buffer.from('2') }]);
    expect(loader.pending).toBe(true);
    expect(await store.get(Buffer.from('row'))).toBeUndefined();
    await loader.ingest();
    expect(loader.pending).toBe(false);
    expect(Buffer.from((await store.get(Buffer.from('row')))!).toString()).toBe('r');
    expect(Buffer.from((await store.get(Buffer.from('meta')))!).toString()).toBe('2');
  });

  it('a file LevelDB could not read (it skips such a record) fails the ingest instead of losing rows', async () => {
    // The damaged batch first, then good ones: every batch of the file is probed, not only the last.
    for (const damaged of [0, 2]) {
      const store = await opened(openScratchStore);
      const host = bulkHostOf(store)!;
      const loader = new BulkLoader(host, NEVER);
      for (let i = 0; i < 3; i++) await loader.append(sortedBatch(pack([{ type: 'put', key: Buffer.from(`row${i}`), value: Buffer.alloc(1000, i) }])));
      const staging = `${host.location}/${STAGING_DIR}`;
      // One file per batch, named in order.
      expect((await readdir(staging)).sort()).toEqual(['0.log', '1.log', '2.log']);
      const file = `${staging}/${damaged}.log`;
      const bytes = await readFile(file);
      bytes[500] = bytes[500]! ^ 0xff;
      await writeFile(file, bytes);
      await expect(loader.ingest()).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    }
  });

  it('ingests in the background while later batches are staged; queued tasks run in order, with the store open', async () => {
    for (const seed of [4, 5]) {
      const reference = await opened(openStateStore);
      const bulked = await opened(openScratchStore);
      // Small limits: an ingest starts after most appends, and appends come while it runs.
      const loader = new BulkLoader(bulkHostOf(bulked)!, { ingestBytesMin: 1, pendingBytesMax: 400_000, levelZeroFilesMax: 1 });
      const seen: number[] = [];
      let n = 0;
      for (const ops of batches(seed)) {
        await packedBatch(reference, pack(ops))();
        await loader.append(sortedBatch(pack(ops)));
        // What replay defers (a chunk's summary): meta keys, never in a bulk file, written when the store is open.
        const meta = [{ type: 'put' as const, key: Buffer.from(`meta${n % 3}`), value: Buffer.from(String(n)) }];
        await reference.write(meta);
        const i = n++;
        void loader.run(async () => {
          seen.push(i);
          await bulked.write(meta);
        });
      }
      await loader.ingest();
      expect(seen).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(await contents(bulked)).toEqual(await contents(reference));
      await bulkHostOf(bulked)!.reopen();
      expect(await contents(bulked)).toEqual(await contents(reference));
      // Nothing is left beside the database once finished.
      expect(await readdir(`${bulkHostOf(bulked)!.location}/${STAGING_DIR}`)).toEqual([]);
      // Every batch leaves a level-0 table: past the bound, finish() compacts them (the same state, read as before).
      expect(await loader.finish()).toBeLessThanOrEqual(1);
      expect(existsSync(`${bulkHostOf(bulked)!.location}/${STAGING_DIR}`)).toBe(false);
      expect(await contents(bulked)).toEqual(await contents(reference));
    }
  });

  it('is offered only for a store opened new (its sequence numbers are counted from 0)', async () => {
    expect(bulkHostOf(await opened(openStateStore))).toBeNull();
    expect(bulkHostOf(await opened(openScratchStore))).not.toBeNull();
  });
});
