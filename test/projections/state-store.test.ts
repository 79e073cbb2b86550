import { afterEach, describe, expect, it } from 'vitest';
import { openStateStore, type StateStore } from '../../projections/index.js';
import { PACKED_PUT, packedBatch } from '../../projections/state-store.js';
import { tempDir } from '../helpers/stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function store(): Promise<StateStore> {
  const { dir, remove } = await tempDir('svcdb-store-');
  const opened = await openStateStore(dir);
  cleanups.push(remove, () => opened.close());
  return opened;
}

const key = (text: string): Uint8Array => Buffer.from(text);

describe('state store writes (one chained LevelDB batch per write)', () => {
  it('applies puts and deletes in order, all of them', async () => {
    const db = await store();
    await db.write([
      { type: 'put', key: key('a'), value: key('1') },
      { type: 'put', key: key('b'), value: key('2') },
    ]);
    // A put then a delete of the same key in one batch: the later op wins, as in the array form.
    await db.write([
      { type: 'del', key: key('a') },
      { type: 'put', key: key('c'), value: key('3') },
      { type: 'put', key: key('b'), value: key('22') },
      { type: 'put', key: key('d'), value: key('4') },
      { type: 'del', key: key('d') },
    ]);
    const entries: [string, string][] = [];
    for await (const batch of db.entries({})) for (const [k, v] of batch) entries.push([Buffer.from(k).toString(), Buffer.from(v).toString()]);
    expect(entries).toEqual([
      ['b', '22'],
      ['c', '3'],
    ]);
  });

  it('keys and values of every shape reach the store as their own bytes: views into shared buffers, small arrays, long ones', async () => {
    const db = await store();
    const shared = new Uint8Array(4096);
    for (let i = 0; i < shared.length; i++) shared[i] = (i * 7) & 0xff;
    const keys = new Uint8Array(256);
    const ops: { type: 'put'; key: Uint8Array; value: Uint8Array }[] = [];
    for (let i = 0; i < 40; i++) {
      keys.set([9, i], 2 * i);
      // Keys: small arrays of their own (on V8's heap) and views at an offset (a bulk insert's slab).
      const k = i % 2 === 0 ? Uint8Array.of(9, i) : keys.subarray(2 * i, 2 * i + 2);
      // Values: views at offset 0 of a bigger buffer, long views, short views, small arrays of their own.
      const value = [shared.subarray(0, 5 + i), shared.subarray(i * 30, i * 30 + 70 + i), shared.subarray(i, i + 3), Uint8Array.of(i, i, i)][i % 4]!;
      ops.push({ type: 'put', key: k, value });
    }
    const expected = ops.map((op) => [[...op.key], [...op.value]]);
    await db.write(ops);
    shared.fill(0); // the store copied every op when it was written
    keys.fill(0);
    const entries: number[][][] = [];
    for await (const batch of db.entries({})) for (const [k, v] of batch) entries.push([[...k], [...v]]);
    expect(entries).toEqual(expected);
  });

  it('a write with an invalid op changes nothing and the store stays usable', async () => {
    const db = await store();
    const bad = [
      { type: 'put', key: key('x'), value: key('1') },
      { type: 'put', key: undefined, value: key('2') },
    ] as never;
    await expect(db.write(bad)).rejects.toThrow();
    expect(await db.get(key('x'))).toBeUndefined();
    await db.write([{ type: 'put', key: key('y'), value: key('3') }]);
    expect(Buffer.from((await db.get(key('y')))!).toString()).toBe('3');
  });
});

describe('getMany in the thread pool (offThread: the candidate rows of a vector scan)', () => {
  it('answers as the synchronous reads do, missing keys included, and reads the snapshot it is given', async () => {
    const db = await store();
    await db.write([
      { type: 'put', key: key('a'), value: key('1') },
      { type: 'put', key: key('c'), value: key('3') },
    ]);
    const keys = [key('c'), key('b'), key('a')];
    const text = (values: (Uint8Array | undefined)[]) => values.map((v) => (v === undefined ? null : Buffer.from(v).toString()));
    expect(text(await db.getMany(keys, undefined, { offThread: true }))).toEqual(['3', null, '1']);
    expect(text(await db.getMany(keys, undefined, { offThread: true }))).toEqual(text(await db.getMany(keys)));
    const snapshot = db.snapshot();
    try {
      await db.write([
        { type: 'put', key: key('b'), value: key('2') },
        { type: 'del', key: key('a') },
      ]);
      expect(text(await db.getMany(keys, snapshot, { offThread: true }))).toEqual(['3', null, '1']);
      expect(text(await db.getMany(keys, snapshot))).toEqual(['3', null, '1']);
      expect(text(await db.getMany(keys, undefined, { offThread: true }))).toEqual(['3', '2', null]);
    } finally {
      await snapshot.close();
    }
  });
});

describe('packed batches (replay)', () => {
  /** One put of `value` under a 6-byte key, packed as replay workers pack their effects. */
  function packedPut(i: number, value: Uint8Array): Uint8Array {
    const k = Uint8Array.from([1, 0, 0, 0, (i >> 8) & 255, i & 255]);
    const out = new Uint8Array(1 + 4 + k.length + 4 + value.length);
    const view = new DataView(out.buffer);
    out[0] = PACKED_PUT;
    view.setUint32(1, k.length);
    out.set(k, 5);
    view.setUint32(5 + k.length, value.length);
    out.set(value, 9 + k.length);
    return out;
  }

  it('frees each written batch: 600 MiB of batches do not stay in memory (a chained batch stays attached to the database until closed)', async () => {
    const db = await store();
    const value = new Uint8Array(1 << 20).fill(7);
    const rssBefore = process.memoryUsage().rss;
    for (let i = 0; i < 600; i++) await packedBatch(db, packedPut(i, value))();
    const grownMiB = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    // Unclosed, every batch's native WriteBatch stayed alive: ~650 MiB here; closed, ~100 MiB (LevelDB's memtables).
    expect(grownMiB).toBeLessThan(350);
    expect(Buffer.from((await db.get(Uint8Array.from([1, 0, 0, 0, 2, 87])))!).equals(Buffer.from(value))).toBe(true);
  });
});

describe("prepared writes (a bulk record's batch built while the log fdatasyncs it)", () => {
  const all = async (db: StateStore): Promise<[string, string][]> => {
    const entries: [string, string][] = [];
    for await (const batch of db.entries({})) for (const [k, v] of batch) entries.push([Buffer.from(k).toString(), Buffer.from(v).toString()]);
    return entries;
  };

  it('a write given its prepared batch writes the prepared ops and the ones after them, in order, at once', async () => {
    const db = await store();
    const prepared = [
      { type: 'put', key: key('a'), value: key('1') },
      { type: 'put', key: key('b'), value: key('2') },
      { type: 'put', key: key('x'), value: key('9') },
    ] as const;
    const batch = db.prepare!(prepared);
    expect(batch.count).toBe(3);
    // Nothing is written before write(): the log's fdatasync may still fail.
    expect(await all(db)).toEqual([]);
    await db.write(
      [...prepared, { type: 'del', key: key('x') }, { type: 'put', key: key('c'), value: key('3') }, { type: 'put', key: key('a'), value: key('11') }],
      batch,
    );
    expect(await all(db)).toEqual([
      ['a', '11'],
      ['b', '2'],
      ['c', '3'],
    ]);
  });

  it('a discarded or already used prepared batch writes nothing of its own: the write puts every op it is given', async () => {
    const db = await store();
    const discarded = db.prepare!([{ type: 'put', key: key('gone'), value: key('1') }]);
    discarded.discard();
    discarded.discard();
    await db.write([{ type: 'put', key: key('d'), value: key('4') }], discarded);
    const used = db.prepare!([{ type: 'put', key: key('e'), value: key('5') }]);
    await db.write([{ type: 'put', key: key('e'), value: key('5') }], used);
    // Given again, it holds nothing: the first op ('f', in the place of its one op) must still be written.
    await db.write(
      [
        { type: 'put', key: key('f'), value: key('6') },
        { type: 'put', key: key('g'), value: key('7') },
      ],
      used,
    );
    expect(await all(db)).toEqual([
      ['d', '4'],
      ['e', '5'],
      ['f', '6'],
      ['g', '7'],
    ]);
  });

  it('a batch prepared before the store closed is refused with STORAGE_UNAVAILABLE, and so is one prepared after', async () => {
    const { dir, remove } = await tempDir('svcdb-store-');
    cleanups.push(remove);
    const db = await openStateStore(dir);
    const ops = [{ type: 'put', key: key('a'), value: key('1') }] as const;
    const before = db.prepare!(ops);
    await db.close();
    await expect(db.write(ops, before)).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    await expect(db.write(ops, db.prepare!(ops))).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
  });
});

describe('state store writes on a closed store', () => {
  it('a write to a closed store is refused with STORAGE_UNAVAILABLE', async () => {
    const { dir, remove } = await tempDir('svcdb-store-');
    cleanups.push(remove);
    const db = await openStateStore(dir);
    await db.close();
    await expect(db.write([{ type: 'put', key: key('a'), value: key('1') }])).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
  });
});
