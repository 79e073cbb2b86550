import { ClassicLevel } from 'classic-level';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { encodeLogRecord, type RowChange } from '../../core/log-records.js';
import { silentLogger } from '../../core/logger.js';
import { type KvOp, openStateStore, prepareDataDir, rebuildProjections } from '../../projections/index.js';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import { BulkLoader } from '../../projections/replay-bulk.js';
import { leveldbHash } from '../../projections/replay-filter.js';
import { sortedBatch } from '../../projections/replay-sort.js';
import { type BulkHost, bulkHostOf, openScratchStore, packedBatch, STORE_OPTIONS } from '../../projections/state-store.js';
import { dumpStore, itemsTable, openLogAt, rowChange, tempDir, txn } from '../helpers/stack.js';
import { contents, pack, storesClosedAfterEach } from '../helpers/packed-stores.js';

const { opened, later } = storesClosedAfterEach('svcdb-tables-');

/**
 * Batches of puts, overwrites and deletes: keys of every length up to past a restart interval's
 * worth of shared prefix (some the prefix of others), values of every size class (past a block, past a table).
 */
function batches(seed: number, count = 14): KvOp[][] {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const sizes = [0, 1, 5, 100, 127, 128, 4000, 4096, 9000, 70_000];
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + next(300) }, (): KvOp => {
      const key = Buffer.from(`${'p'.repeat(next(3) * 20)}k${next(400)}`);
      if (next(6) === 0) return { type: 'del', key };
      return { type: 'put', key, value: Buffer.alloc(sizes[next(sizes.length)]!, next(256)) };
    }),
  );
}

/** The bulk loader holding every batch for finish() to write as tables (small tables: many of them). */
function holdingLoader(host: BulkHost, heldBytesMax = Number.MAX_SAFE_INTEGER): BulkLoader {
  return new BulkLoader(host, {
    ingestBytesMin: Number.MAX_SAFE_INTEGER,
    pendingBytesMax: Number.MAX_SAFE_INTEGER,
    levelZeroFilesMax: 6,
    heldBytesMax,
    tableBytes: 16 * 1024,
  });
}

/** What LevelDB itself says of the closed store's files (an open of its own, as a server's). */
async function levelDbView(location: string): Promise<{ levelZero: number; levelSix: number; stats: string }> {
  const db = new ClassicLevel<Uint8Array, Uint8Array>(location, STORE_OPTIONS);
  await db.open();
  try {
    return {
      levelZero: Number(db.getProperty('leveldb.num-files-at-level0')),
      levelSix: Number(db.getProperty('leveldb.num-files-at-level6')),
      stats: db.getProperty('leveldb.stats'),
    };
  } finally {
    await db.close();
  }
}

describe('replay writes the store as bottom-level tables (replay-tables.ts)', () => {
  it('leaves the state ordinary batches leave: ingests, ordinary writes and queued meta writes between held batches', async () => {
    for (const seed of [1, 2, 3]) {
      const reference = await opened(openStateStore);
      const bulked = await opened(openScratchStore);
      const host = bulkHostOf(bulked)!;
      const loader = holdingLoader(host);
      let i = 0;
      for (const ops of batches(seed)) {
        await packedBatch(reference, pack(ops))();
        if (i % 5 === 4) {
          // A barrier or a vector chunk: what was held is ingested first, then the ordinary batch.
          await loader.ingest();
          await packedBatch(bulked, pack(ops))();
        } else await loader.append(sortedBatch(pack(ops)));
        const meta = [{ type: 'put' as const, key: Buffer.from(`meta${i % 3}`), value: Buffer.from(String(i)) }];
        await reference.write(meta);
        void loader.run(() => bulked.write(meta));
        i += 1;
      }
      expect(loader.holding).toBe(true);
      expect(await loader.finish()).toBe(0);
      expect(await contents(bulked)).toEqual(await contents(reference));
      // Only the new tables, the MANIFEST naming them and what LevelDB wrote at the open are left.
      const names = await readdir(host.location);
      expect(names.filter((name) => name.endsWith('.ldb')).length).toBeGreaterThan(3);
      expect(names.filter((name) => name.startsWith('MANIFEST-'))).toHaveLength(1);
      expect(names).not.toContain('replay-staging');

      // The store then lives as any: writes, deletes, a compaction, a reopen.
      const later = batches(seed + 10, 4).flat();
      for (const store of [reference, bulked]) {
        await store.write(later);
        await store.write(later.filter((_, n) => n % 3 === 0).map((op) => ({ type: 'del' as const, key: op.key })));
      }
      await host.compact();
      expect(await contents(bulked)).toEqual(await contents(reference));
      await host.reopen();
      expect(await contents(bulked)).toEqual(await contents(reference));
    }
  });

  it('merges batches shaped like replay chunks: key ranges of their own, overlaps at the edges, keys shared at every merge step', async () => {
    // Each batch: a range of row keys (runs of one batch win many entries in a row), a few keys
    // scattered over the others' ranges (index entries), and overwrites and deletes of the previous
    // batch's last keys and of its first key (equal keys where one run's lead over the others ends).
    const key = (n: number) => Buffer.from(`r${String(n).padStart(6, '0')}`);
    const ranges: KvOp[][] = Array.from({ length: 9 }, (_, b) => {
      const ops: KvOp[] = [];
      for (let n = b * 400 - 20; n < b * 400 + 400; n++) if (n >= 0) ops.push({ type: 'put', key: key(n), value: Buffer.from(`v${b}.${n}`) });
      for (let n = 0; n < 30; n++) ops.push({ type: 'put', key: key((n * 977 + b * 131) % 3600), value: Buffer.from(`s${b}`) });
      if (b > 0) ops.push({ type: 'del', key: key(b * 400 - 1) }, { type: 'del', key: key(b * 400 - 400) });
      return ops;
    });
    const reference = await opened(openStateStore);
    const bulked = await opened(openScratchStore);
    const loader = holdingLoader(bulkHostOf(bulked)!);
    for (const ops of ranges) {
      await packedBatch(reference, pack(ops))();
      await loader.append(sortedBatch(pack(ops)));
    }
    expect(await loader.finish()).toBe(0);
    const expected = await contents(reference);
    expect(expected.length).toBeGreaterThan(3000);
    expect(await contents(bulked)).toEqual(expected);
  });

  it('leaves nothing in level 0: the tables are at level 6, read by a server open as they were written', async () => {
    const reference = await opened(openStateStore);
    const bulked = await opened(openScratchStore);
    const host = bulkHostOf(bulked)!;
    const loader = holdingLoader(host);
    for (const ops of batches(7)) {
      await packedBatch(reference, pack(ops))();
      await loader.append(sortedBatch(pack(ops)));
    }
    expect(await loader.finish()).toBe(0);
    const expected = await contents(reference);
    await bulked.close();
    const view = await levelDbView(host.location);
    expect(view.levelZero).toBe(0);
    expect(view.levelSix).toBeGreaterThan(3);
    expect(view.stats).toMatch(/^\s+6\s+\d+/m);
    const server = await openStateStore(host.location);
    later(() => server.close());
    expect(await contents(server)).toEqual(expected);
  });

  it('writes the bloom filter the store opens with: every key reads back through it, point reads of absent keys find nothing', async () => {
    const reference = await opened(openStateStore);
    const bulked = await opened(openScratchStore);
    const host = bulkHostOf(bulked)!;
    const loader = holdingLoader(host);
    for (const ops of batches(5)) {
      await packedBatch(reference, pack(ops))();
      await loader.append(sortedBatch(pack(ops)));
    }
    expect(await loader.finish()).toBe(0);
    const expected = await contents(reference);
    await bulked.close();
    const tables = (await readdir(host.location)).filter((name) => name.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(3);
    for (const name of tables) expect((await readFile(`${host.location}/${name}`)).includes('filter.leveldb.BuiltinBloomFilter2')).toBe(true);
    // Point reads go through each table's filter (a key it does not hold is not looked up further).
    const db = new ClassicLevel<Uint8Array, Uint8Array>(host.location, STORE_OPTIONS);
    await db.open();
    later(() => db.close());
    const got = await db.getMany(expected.map(([key]) => Buffer.from(key, 'hex')));
    expect(got.map((value) => Buffer.from(value!).toString('hex'))).toEqual(expected.map(([, value]) => value));
    const absent = await db.getMany(expected.map(([key]) => Buffer.from(`${key}x`)));
    expect(absent.every((value) => value === undefined)).toBe(true);
  });

  it("hashes keys for the filter as LevelDB does (util/hash_test.cc's vectors), and cuts tables at the store's table size", () => {
    const data5 = Uint8Array.of(
      1,
      0xc0,
      ...new Array<number>(14).fill(0),
      0x14,
      0,
      0,
      0,
      0,
      0,
      4,
      0,
      0,
      0,
      0,
      0x14,
      0,
      0,
      0,
      0x18,
      0x28,
      ...new Array<number>(7).fill(0),
      2,
      ...new Array<number>(7).fill(0),
    );
    expect(data5.length).toBe(48);
    const cases: [Uint8Array, number, number][] = [
      [new Uint8Array(0), 0xbc9f1d34, 0xbc9f1d34],
      [Uint8Array.of(0x62), 0xbc9f1d34, 0xef1345c4],
      [Uint8Array.of(0xc3, 0x97), 0xbc9f1d34, 0x5b663814],
      [Uint8Array.of(0xe2, 0x99, 0xa5), 0xbc9f1d34, 0x323c078f],
      [Uint8Array.of(0xe1, 0x80, 0xb9, 0x32), 0xbc9f1d34, 0xed21633a],
      [data5, 0x12345678, 0xf333dabb],
    ];
    for (const [data, seed, hash] of cases) expect(leveldbHash(Uint8Array.of(7, ...data), 1, data.length, seed)).toBe(hash);
    expect(PROJECTION_LIMITS.replayTableBytes).toBe(STORE_OPTIONS.maxFileSize);
  });

  it('past the bound of held bytes the rest goes through LevelDB recovery, with the same state', async () => {
    const reference = await opened(openStateStore);
    const bulked = await opened(openScratchStore);
    const loader = holdingLoader(bulkHostOf(bulked)!, 150_000);
    let sawHolding = false;
    for (const ops of batches(4)) {
      await packedBatch(reference, pack(ops))();
      await loader.append(sortedBatch(pack(ops)));
      sawHolding ||= loader.holding;
    }
    expect(sawHolding).toBe(true);
    expect(loader.holding).toBe(false);
    await loader.finish();
    expect(await contents(bulked)).toEqual(await contents(reference));
  });

  it('a table LevelDB cannot read back fails the replay instead of being swapped in', async () => {
    const damages: ((bytes: Buffer) => number)[] = [
      // The footer's magic number: LevelDB cannot open the table.
      (bytes) => bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1),
      // A byte of the first entry's value: read back, it differs from what was written.
      (bytes) => bytes.writeUInt8(bytes.readUInt8(40) ^ 0xff, 40),
    ];
    for (const damage of damages) {
      const bulked = await opened(openScratchStore);
      const real = bulkHostOf(bulked)!;
      // The store as the loader sees it, with a table damaged after it is written and before LevelDB opens it.
      const host = Object.create(real) as BulkHost;
      host.closedFor = (task) =>
        real.closedFor.call(host, async () => {
          await task();
          const table = (await readdir(real.location)).filter((name) => name.endsWith('.ldb')).sort()[0]!;
          const bytes = await readFile(`${real.location}/${table}`);
          damage(bytes);
          await writeFile(`${real.location}/${table}`, bytes);
        });
      const loader = holdingLoader(host);
      await loader.append(
        sortedBatch(pack(Array.from({ length: 50 }, (_, n): KvOp => ({ type: 'put', key: Buffer.from(`row${n}`), value: Buffer.alloc(300, n) })))),
      );
      await expect(loader.finish()).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    }
  });
});

describe('replay through written tables, end to end', () => {
  it('gives the state the staged path gives: held in one thread, split with the worker, and past the held bound', async () => {
    const { dir: dataDir, remove } = await tempDir('svcdb-tables-e2e-');
    later(remove);
    const layout = await prepareDataDir(dataDir, { create: true });
    const log = await openLogAt(layout.logDir);
    const table = itemsTable(1, { scoreIndexId: 2 });
    const other = itemsTable(2, { name: 'other', scoreIndexId: 3 });
    await log.append(encodeLogRecord(txn([{ kind: 'put_table', table }]))).durable;
    const row = (id: number, score: number) => ({ id: BigInt(id), name: `n${id}`, score });
    for (let r = 0; r < 3000; r++) {
      // A catalog change midway: a barrier, what was held before it is ingested.
      if (r === 1700) await log.append(encodeLogRecord(txn([{ kind: 'put_table', table: other }]))).durable;
      const id = r % 900;
      const ops: RowChange[] = [
        r < 900 ? rowChange(table, 'insert', null, row(id, r % 7)) : rowChange(table, 'update', row(id, (r - 900) % 7), row(id, r % 7)),
      ];
      if (r % 11 === 0 && r >= 900) ops.push(rowChange(table, 'delete', row((r + 450) % 900, 0), null));
      if (r >= 1700) ops.push(rowChange(other, 'insert', null, row(r, r % 5)));
      await log.append(encodeLogRecord(txn(ops))).durable;
    }
    const replay = async (options: Record<string, number>): Promise<Map<string, string>> => {
      const liveStore = await openStateStore(layout.stateDir);
      await rebuildProjections({ log, layout, liveStore, batchBytesMax: 8192, logger: silentLogger, onProgress: () => {}, bulkChunkBytesMin: 0, ...options });
      const store = await openStateStore(layout.stateDir);
      try {
        return await dumpStore(store);
      } finally {
        await store.close();
      }
    };
    try {
      const staged = await replay({ workerThreads: 0, bulkHeldBytesMax: 0 });
      expect(staged.size).toBeGreaterThan(2000);
      expect(await replay({ workerThreads: 0 }), 'held, one thread').toEqual(staged);
      expect(await replay({ workerThreads: 1, tablesSplitBytesMin: 0 }), 'held, tables split with the worker').toEqual(staged);
      expect(await replay({ workerThreads: 1, tablesSplitBytesMin: 0, bulkHeldBytesMax: 40_000 }), 'past the held bound').toEqual(staged);
    } finally {
      await log.close();
    }
  }, 120_000);
});
