import { describe, expect, it } from 'vitest';
import { keys, RowVersionedStore, type KvOp, type RangeOptions, type StateStore, type StoreSnapshot } from '../../projections/index.js';
import { openSql } from '../query/helpers.js';

/** The raw store, counting the LevelDB snapshots taken. */
class CountingStore implements StateStore {
  snapshots = 0;
  constructor(private readonly inner: StateStore) {}
  get(key: Uint8Array, snapshot?: StoreSnapshot) {
    return this.inner.get(key, snapshot);
  }
  getMany(k: readonly Uint8Array[], snapshot?: StoreSnapshot) {
    return this.inner.getMany(k, snapshot);
  }
  entries(range: RangeOptions) {
    return this.inner.entries(range);
  }
  write(ops: readonly KvOp[]) {
    return this.inner.write(ops);
  }
  sync() {
    return this.inner.sync();
  }
  isOpen() {
    return this.inner.isOpen();
  }
  snapshot() {
    this.snapshots += 1;
    return this.inner.snapshot();
  }
  close() {
    return this.inner.close();
  }
}

const TABLE = 4242;
const put = (id: number, value: number): KvOp => ({ type: 'put', key: keys.rowKey(TABLE, Uint8Array.of(id)), value: Uint8Array.of(value) });
const read = async (store: StateStore, snapshot: StoreSnapshot, id: number) => (await store.get(keys.rowKey(TABLE, Uint8Array.of(id)), snapshot))?.[0];

describe('RowVersionedStore snapshots', () => {
  it('take the LevelDB snapshot only when read through or before the next write, and still see the store of their moment', async () => {
    const sql = await openSql();
    try {
      const raw = new CountingStore(sql.stack.store);
      const store = new RowVersionedStore(raw);
      await store.write([put(1, 10)]);
      const early = store.snapshot();
      const unread = store.snapshot();
      expect(store.rowVersion(early, TABLE)).toBe(2);
      expect(raw.snapshots).toBe(0); // versions alone: what a statement served from the scan cache needs
      await unread.close();
      await store.write([put(1, 11), put(2, 20)]); // takes early's snapshot first, not unread's
      expect(raw.snapshots).toBe(1);
      expect(await read(store, early, 1)).toBe(10);
      expect(await read(store, early, 2)).toBeUndefined();
      const late = store.snapshot();
      expect(await read(store, late, 1)).toBe(11); // taken on first read
      expect(raw.snapshots).toBe(2);
      const entries = [];
      for await (const batch of store.entries({ ...keys.idRange(keys.KeySpace.Row, TABLE), snapshot: early })) entries.push(...batch);
      expect(entries.map(([, v]) => v[0])).toEqual([10]);
      await Promise.all([early.close(), late.close()]);
      await store.write([put(3, 30)]);
      expect(raw.snapshots).toBe(2);
    } finally {
      await sql.close();
    }
  });
});
