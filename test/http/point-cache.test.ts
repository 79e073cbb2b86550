import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT, type TableId } from '../../core/catalog.js';
import { keys, openStateStore, rowCacheDroppedSlotBytes, rowCacheName, RowVersionedStore } from '../../projections/index.js';
import { bearer } from '../helpers/auth.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

/**
 * The point-read cache (RowVersionedStore.getRowSync): GET /tables/{t}/rows/{id} and POST /query's
 * point SELECT read a row image from memory once it was read, until a write changes that key. It
 * must never serve a stale row: every read below follows a write of the key it reads.
 */
describe('RowVersionedStore.getRowSync: the point-read cache over a real LevelDB', () => {
  const T1 = 7 as TableId;
  const T2 = 8 as TableId;
  const key = (table: TableId, n: number): Uint8Array => keys.rowKey(table, Uint8Array.of(n));
  const value = (text: string): Uint8Array => new TextEncoder().encode(text);
  const text = (image: Uint8Array | undefined): string | undefined => (image === undefined ? undefined : new TextDecoder().decode(image));
  const rowOf = (store: RowVersionedStore, table: TableId, rowKey: Uint8Array): Uint8Array | undefined => store.getRowSync!(table, rowKey).image;

  it('follows every write of a key: put, put again, delete, put after a cached miss', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const store = new RowVersionedStore(await openStateStore(dir));
    try {
      const read = (table: TableId, n: number) => text(rowOf(store, table, key(table, n)));
      expect(read(T1, 1)).toBeUndefined(); // a miss is cached too
      expect(store.rowCacheSize().rows).toBe(1);
      await store.write([{ type: 'put', key: key(T1, 1), value: value('one') }]);
      expect(read(T1, 1)).toBe('one');
      expect(read(T1, 1)).toBe('one');
      await store.write([{ type: 'put', key: key(T1, 1), value: value('uno') }]);
      expect(read(T1, 1)).toBe('uno');
      await store.write([{ type: 'put', key: key(T2, 1), value: value('other table') }]);
      expect(read(T1, 1)).toBe('uno');
      expect(read(T2, 1)).toBe('other table');
      await store.write([
        { type: 'del', key: key(T1, 1) },
        { type: 'put', key: key(T2, 1), value: value('changed') },
      ]);
      expect(read(T1, 1)).toBeUndefined();
      expect(read(T2, 1)).toBe('changed');
      // A write to other keys of the table leaves a cached key as it was (and right).
      expect(read(T1, 2)).toBeUndefined();
      await store.write([{ type: 'put', key: key(T1, 3), value: value('three') }]);
      expect(read(T1, 2)).toBeUndefined();
      expect(read(T1, 3)).toBe('three');
      // Long keys (a long text primary key) and keys differing only in their last byte.
      const long = (last: number): Uint8Array =>
        keys.rowKey(
          T1,
          Uint8Array.from({ length: 3000 }, (_, i) => (i === 2999 ? last : (i * 7) % 256)),
        );
      expect(text(rowOf(store, T1, long(1)))).toBeUndefined();
      await store.write([{ type: 'put', key: long(1), value: value('long one') }]);
      expect(text(rowOf(store, T1, long(1)))).toBe('long one');
      expect(text(rowOf(store, T1, long(2)))).toBeUndefined();
      await store.write([{ type: 'put', key: long(2), value: value('long two') }]);
      expect(text(rowOf(store, T1, long(2)))).toBe('long two');
      expect(text(rowOf(store, T1, long(1)))).toBe('long one');
    } finally {
      await store.close();
      await remove();
    }
  });

  it('while a write to the table is in flight reads the store and caches nothing; after it, the new value', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const store = new RowVersionedStore(await openStateStore(dir));
    try {
      await store.write([{ type: 'put', key: key(T1, 1), value: value('before') }]);
      expect(text(rowOf(store, T1, key(T1, 1)))).toBe('before');
      const writing = store.write([{ type: 'put', key: key(T1, 1), value: value('after') }]);
      const rowsBefore = store.rowCacheSize().rows;
      expect(rowsBefore).toBe(0); // the write's key left the cache as the write started
      rowOf(store, T1, key(T1, 1));
      rowOf(store, T1, key(T1, 2));
      expect(store.rowCacheSize().rows).toBe(0);
      // Another table is not written: its reads are cached as usual.
      rowOf(store, T2, key(T2, 1));
      expect(store.rowCacheSize().rows).toBe(1);
      await writing;
      expect(text(rowOf(store, T1, key(T1, 1)))).toBe('after');
      expect(text(rowOf(store, T1, key(T1, 1)))).toBe('after');
    } finally {
      await store.close();
      await remove();
    }
  });

  it('stays within its byte bound, and still answers right once it started over', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const bytesMax = 4096;
    const store = new RowVersionedStore(await openStateStore(dir), bytesMax);
    try {
      await store.write(Array.from({ length: 200 }, (_, n) => ({ type: 'put' as const, key: key(T1, n), value: value(`row ${n}`) })));
      for (let round = 0; round < 2; round++) {
        for (let n = 0; n < 200; n++) {
          expect(text(rowOf(store, T1, key(T1, n)))).toBe(`row ${n}`);
          expect(store.rowCacheSize().bytes).toBeLessThanOrEqual(bytesMax);
        }
      }
      expect(store.rowCacheSize().rows).toBeGreaterThan(0);
      await store.write([{ type: 'put', key: key(T1, 199), value: value('new') }]);
      expect(text(rowOf(store, T1, key(T1, 199)))).toBe('new');
    } finally {
      await store.close();
      await remove();
    }
  });

  it('past its bound drops its oldest entries, not all of them: the rows read last stay cached', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const bytesMax = 16 * 1024; // ~95 entries of these rows (~170 bytes counted each)
    const store = new RowVersionedStore(await openStateStore(dir), bytesMax);
    try {
      const count = 250; // keys are one byte
      await store.write(Array.from({ length: count }, (_, n) => ({ type: 'put' as const, key: key(T1, n), value: value(`row ${n}`) })));
      const entries = Array.from({ length: count }, (_, n) => store.getRowSync!(T1, key(T1, n)));
      const most = store.rowCacheSize().rows;
      // Read past the bound, at least three quarters of it stay (starting over kept only what came after).
      for (let n = 0; n < count; n++) {
        expect(text(entries[n]!.image)).toBe(`row ${n}`);
        expect(store.rowCacheSize().bytes).toBeLessThanOrEqual(bytesMax);
      }
      expect(most).toBeGreaterThan(60);
      // The last rows read are the very entries cached (no store read); the first ones went.
      for (let n = count - 60; n < count; n++) expect(store.getRowSync!(T1, key(T1, n))).toBe(entries[n]);
      expect(store.getRowSync!(T1, key(T1, 0))).not.toBe(entries[0]);
      expect(text(store.getRowSync!(T1, key(T1, 0)).image)).toBe('row 0');
      // Memos past the bound drop the oldest entries too, and a write still drops what it changes.
      const owner = {};
      entries[count - 1]!.remember(owner, 'x'.repeat(8_000), 8_000);
      expect(store.rowCacheSize().bytes).toBeLessThanOrEqual(bytesMax);
      expect(store.getRowSync!(T1, key(T1, count - 1))).toBe(entries[count - 1]);
      await store.write([{ type: 'put', key: key(T1, count - 1), value: value('changed') }]);
      expect(text(store.getRowSync!(T1, key(T1, count - 1)).image)).toBe('changed');
    } finally {
      await store.close();
      await remove();
    }
  });

  it('an entry read with its name given (getRowSync(table, key, rowCacheName(key))) is the one named by the key, and a write drops it', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const store = new RowVersionedStore(await openStateStore(dir));
    try {
      await store.write([{ type: 'put', key: key(T1, 5), value: value('five') }]);
      const named = store.getRowSync!(T1, key(T1, 5), rowCacheName(key(T1, 5)));
      expect(text(named.image)).toBe('five');
      expect(store.getRowSync!(T1, key(T1, 5))).toBe(named);
      expect(store.getRowSyncByName!(T1, rowCacheName(key(T1, 5)))).toBe(named);
      await store.write([{ type: 'put', key: key(T1, 5), value: value('cinco') }]);
      expect(text(store.getRowSync!(T1, key(T1, 5), rowCacheName(key(T1, 5))).image)).toBe('cinco');
      expect(store.rowCacheSize().rows).toBe(1);
    } finally {
      await store.close();
      await remove();
    }
  });

  it('keeps an image as text, not as the Buffer LevelDB handed out: each read of it is its own copy, all bytes kept', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const store = new RowVersionedStore(await openStateStore(dir));
    try {
      // Every byte value, high ones and zeros included: a latin1 text keeps each as one char.
      const every = Uint8Array.from({ length: 512 }, (_, i) => (i * 7) & 0xff);
      await store.write([
        { type: 'put', key: key(T1, 1), value: every },
        { type: 'put', key: key(T1, 2), value: new Uint8Array(0) },
      ]);
      const entry = store.getRowSync!(T1, key(T1, 1));
      expect(entry.found).toBe(true);
      expect(entry.imageBytes).toBe(512);
      const first = entry.image!;
      expect([...first]).toEqual([...every]);
      // A copy per read: a reader that changes (or keeps views of) its bytes touches nothing cached.
      first.fill(0);
      expect(entry.image).not.toBe(first);
      expect([...entry.image!]).toEqual([...every]);
      expect(store.getRowSync!(T1, key(T1, 1))).toBe(entry);
      // An empty image is a row (found), a missing key is not.
      const empty = store.getRowSync!(T1, key(T1, 2));
      expect(empty.found).toBe(true);
      expect(empty.imageBytes).toBe(0);
      expect([...empty.image!]).toEqual([]);
      const missing = store.getRowSync!(T1, key(T1, 3));
      expect(missing.found).toBe(false);
      expect(missing.image).toBeUndefined();
      // Counted as key, image and the entry's overhead: the kept text's bytes, not a Buffer's.
      const counted = store.rowCacheSize().bytes;
      expect(counted).toBeGreaterThanOrEqual(3 * 6 + 512);
      expect(counted).toBeLessThan(3 * 6 + 512 + 3 * 200);
    } finally {
      await store.close();
      await remove();
    }
  });

  it('a first read may have the bytes the store handed out: each entry its own image, in any order of reads, never one shared', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const store = new RowVersionedStore(await openStateStore(dir));
    try {
      await store.write([1, 2, 3].map((n) => ({ type: 'put' as const, key: key(T1, n), value: value(`row ${n}`) })));
      // Entries made one after the other, their images asked for in another order, twice each.
      const [one, two, three] = [1, 2, 3].map((n) => store.getRowSync!(T1, key(T1, n)));
      const images = [three!.image!, one!.image!, two!.image!, three!.image!, one!.image!, two!.image!];
      expect(images.map(text)).toEqual(['row 3', 'row 1', 'row 2', 'row 3', 'row 1', 'row 2']);
      expect(new Set(images).size).toBe(6);
      // Changing one reader's bytes touches no other read's.
      for (const image of images) image.fill(0);
      expect([one, two, three].map((entry) => text(entry!.image))).toEqual(['row 1', 'row 2', 'row 3']);
      // An entry made while a write to the table is in flight (not cached) too.
      const writing = store.write([{ type: 'put', key: key(T1, 4), value: value('row 4') }]);
      const uncached = store.getRowSync!(T1, key(T1, 2));
      const first = uncached.image!;
      first.fill(0);
      expect(text(uncached.image)).toBe('row 2');
      await writing;
    } finally {
      await store.close();
      await remove();
    }
  });

  it('counts what readers keep with a row (its JSON text) against the bound, and stops counting it once the row leaves', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const bytesMax = 64 * 1024;
    const store = new RowVersionedStore(await openStateStore(dir), bytesMax);
    try {
      await store.write([1, 2, 3].map((n) => ({ type: 'put' as const, key: key(T1, n), value: value(`row ${n}`) })));
      const owner = {};
      const one = store.getRowSync!(T1, key(T1, 1));
      const base = store.rowCacheSize().bytes;
      one.remember(owner, 'a'.repeat(10_000), 10_000);
      expect(store.rowCacheSize().bytes).toBe(base + 10_000);
      one.remember(owner, 'b'.repeat(4_000), 4_000); // a new memo replaces the old one's count
      expect(store.rowCacheSize().bytes).toBe(base + 4_000);
      // A write of the key drops the entry with its memo; a late remember on it counts nothing.
      await store.write([{ type: 'put', key: key(T1, 1), value: value('one again') }]);
      // What stays is the key's slot (set over when it is read again, never deleted: see DROPPED).
      const slot = rowCacheDroppedSlotBytes(key(T1, 1).length);
      expect(store.rowCacheSize()).toEqual({ rows: 0, bytes: slot });
      one.remember(owner, 'c'.repeat(50_000), 50_000);
      expect(store.rowCacheSize().bytes).toBe(slot);
      // Memos past the bound drop the oldest entries (the dropped slot, then two), as rows past it do.
      const two = store.getRowSync!(T1, key(T1, 2));
      two.remember(owner, 'd'.repeat(40_000), 40_000);
      expect(store.rowCacheSize().rows).toBe(1);
      const three = store.getRowSync!(T1, key(T1, 3));
      three.remember(owner, 'e'.repeat(40_000), 40_000);
      expect(store.rowCacheSize().rows).toBe(1);
      expect(store.rowCacheSize().bytes).toBeGreaterThan(40_000);
      expect(store.rowCacheSize().bytes).toBeLessThan(40_000 + 1_000);
      expect(store.getRowSync!(T1, key(T1, 3))).toBe(three);
      expect(store.getRowSync!(T1, key(T1, 2))).not.toBe(two);
      expect(text(rowOf(store, T1, key(T1, 3)))).toBe('row 3');
      expect(text(rowOf(store, T1, key(T1, 1)))).toBe('one again');
    } finally {
      await store.close();
      await remove();
    }
  });

  it('a key written and read in turn keeps one slot: counted exactly, never stale, the rest of the table still cached', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const other = await tempDir('svcdb-point-cache-');
    const store = new RowVersionedStore(await openStateStore(dir));
    // The same rows cached without the hot one: what the cache counts besides the hot key.
    const without = new RowVersionedStore(await openStateStore(other.dir));
    try {
      const rows = Array.from({ length: 200 }, (_, n) => ({ type: 'put' as const, key: key(T1, n), value: value(`row ${n}`) }));
      await store.write(rows);
      await without.write(rows);
      for (let n = 0; n < 200; n++) rowOf(store, T1, key(T1, n));
      for (let n = 0; n < 200; n++) if (n !== 5) rowOf(without, T1, key(T1, n));
      expect(store.rowCacheSize().rows).toBe(200);
      const hot = key(T1, 5);
      const slot = rowCacheDroppedSlotBytes(hot.length);
      for (let round = 0; round < 300; round++) {
        const next = round % 7 === 6 ? undefined : `hot ${round}`;
        await store.write([next === undefined ? { type: 'del', key: hot } : { type: 'put', key: hot, value: value(next) }]);
        // The dropped entry's row and memo left the count; its slot (key and Map entry) stays counted.
        expect(store.rowCacheSize()).toEqual({ rows: 199, bytes: without.rowCacheSize().bytes + slot });
        expect(text(rowOf(store, T1, hot))).toBe(next);
        expect(store.rowCacheSize().rows).toBe(200);
      }
      for (let n = 0; n < 200; n++) if (n !== 5) expect(text(rowOf(store, T1, key(T1, n)))).toBe(`row ${n}`);
      expect(store.rowCacheSize().rows).toBe(200);
    } finally {
      await store.close();
      await without.close();
      await remove();
      await other.remove();
    }
  });

  it('keys written once and never read again stay bounded by bytes: the cache starts over and answers right', async () => {
    const { dir, remove } = await tempDir('svcdb-point-cache-');
    const bytesMax = 8192;
    const store = new RowVersionedStore(await openStateStore(dir), bytesMax);
    try {
      for (let n = 0; n < 250; n++) {
        await store.write([{ type: 'put', key: key(T1, n), value: value(`row ${n}`) }]);
        expect(text(rowOf(store, T1, key(T1, n)))).toBe(`row ${n}`);
        await store.write([{ type: 'del', key: key(T1, n) }]); // leaves a dropped slot behind
        expect(store.rowCacheSize().bytes).toBeLessThanOrEqual(bytesMax);
      }
      for (let n = 0; n < 250; n++) expect(rowOf(store, T1, key(T1, n))).toBeUndefined();
    } finally {
      await store.close();
      await remove();
    }
  });
});

describe('point reads over HTTP never answer a stale row', () => {
  let server: TestServer | null = null;
  let dataDir: { dir: string; remove: () => Promise<void> };
  let auth: Record<string, string>;

  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${server!.baseUrl}/api/v1${path}`, {
      method,
      headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const sql = async (text: string, params: unknown[] = []): Promise<any[]> => {
    const result = await call('POST', '/query', { sql: text, params });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    return result.body.data;
  };
  /** The row by GET and by point SELECT (both read twice: the second read is the cached one); null when none. */
  const row = async (id: number): Promise<unknown> => {
    const answers: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const got = await call('GET', `/tables/p/rows/${id}`);
      answers.push(got.status === 404 ? null : got.body.data);
      const selected = await sql('SELECT * FROM p WHERE id = $1', [id]);
      answers.push(selected[0] ?? null);
    }
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    return answers[0];
  };

  beforeAll(async () => {
    dataDir = await tempDir('svcdb-point-cache-http-');
    server = await startTestServer({ dataDir: dataDir.dir });
    auth = bearer(server.apiKey);
    await sql('CREATE TABLE p (id BIGINT PRIMARY KEY, v TEXT, n INTEGER)');
  });
  afterAll(async () => {
    await server?.close();
    await dataDir?.remove();
  });

  it('sees each write of every kind between reads', async () => {
    expect(await row(1)).toBeNull();
    await sql("INSERT INTO p VALUES (1, 'a', 1), (2, 'b', 2)");
    expect(await row(1)).toEqual({ id: 1, v: 'a', n: 1 });
    await sql('UPDATE p SET n = n + 10 WHERE id = $1', [1]);
    expect(await row(1)).toEqual({ id: 1, v: 'a', n: 11 });
    expect((await call('PATCH', '/tables/p/rows/1', { updates: { v: 'patched' } })).status).toBe(200);
    expect(await row(1)).toEqual({ id: 1, v: 'patched', n: 11 });
    expect((await call('POST', '/tables/p/rows', { id: 3, v: 'c', n: 3 })).status).toBe(201);
    expect(await row(3)).toEqual({ id: 3, v: 'c', n: 3 });
    expect((await call('PUT', '/tables/p/rows', { filter: 'id >= 2', updates: { v: 'put' } })).status).toBe(200);
    expect(await row(2)).toEqual({ id: 2, v: 'put', n: 2 });
    expect(await row(3)).toEqual({ id: 3, v: 'put', n: 3 });
    await sql("INSERT INTO p VALUES (3, 'x', 0) ON CONFLICT (id) DO UPDATE SET v = 'upserted'");
    expect(await row(3)).toEqual({ id: 3, v: 'upserted', n: 3 });
    expect((await call('DELETE', '/tables/p/rows/2')).status).toBe(200);
    expect(await row(2)).toBeNull();
    await sql('DELETE FROM p WHERE id = 3');
    expect(await row(3)).toBeNull();
    await sql("INSERT INTO p SELECT g, 'gen', g FROM generate_series(2, 5) g");
    expect(await row(2)).toEqual({ id: 2, v: 'gen', n: 2 });
    expect(await row(5)).toEqual({ id: 5, v: 'gen', n: 5 });
    await sql('TRUNCATE p');
    expect(await row(1)).toBeNull();
    await sql("INSERT INTO p VALUES (1, 'again', 1)");
    expect(await row(1)).toEqual({ id: 1, v: 'again', n: 1 });
  });

  it('the point SELECT with a text writer: one frozen row and its text per stored row, new ones once it is written', async () => {
    await sql("INSERT INTO p VALUES (20, 'shared', 0)");
    const toText = (row: Record<string, unknown>): string => JSON.stringify(row);
    const options = { tenant: DEFAULT_TENANT, params: [20], timeoutMs: 10_000, maxRows: 10 };
    const select = () => {
      const result = server!.sql.pointSelect('SELECT * FROM p WHERE id = $1', options, toText);
      expect(result).toBeDefined(); // the statement is cached: the fast path answers
      return result!;
    };
    await sql('SELECT * FROM p WHERE id = $1', [20]);
    const first = select();
    expect(first.rowsText).toBe('[{"id":20,"v":"shared","n":0}]');
    expect(Object.isFrozen(first.rows[0])).toBe(true);
    expect(select().rows[0]).toBe(first.rows[0]);
    await sql("UPDATE p SET v = 'changed' WHERE id = 20");
    // The update is answered once durable: until the tables projection applied it, the direct path
    // hands over to execute() (undefined), which waits at the read barrier. A read waits there first.
    await server!.sql.execute('SELECT 1', options);
    const second = select();
    expect(second.rows[0]).toEqual({ id: 20, v: 'changed', n: 0 });
    expect(second.rowsText).toBe('[{"id":20,"v":"changed","n":0}]');
    expect(first.rows[0]).toEqual({ id: 20, v: 'shared', n: 0 });
    // Another writer gets its own text; without one, rows are the caller's own (not frozen, no text).
    expect(server!.sql.pointSelect('SELECT * FROM p WHERE id = $1', options, (row) => `<${String(row['v'])}>`)!.rowsText).toBe('[<changed>]');
    const plain = server!.sql.pointSelect('SELECT * FROM p WHERE id = $1', options)!;
    expect(plain.rowsText).toBeUndefined();
    expect(Object.isFrozen(plain.rows[0])).toBe(false);
    expect(server!.sql.pointSelect('SELECT * FROM p WHERE id = $1', { ...options, params: [999] }, toText)!.rowsText).toBe('[]');
    expect(Object.isFrozen((await server!.sql.execute('SELECT * FROM p WHERE id = $1', options)).rows[0])).toBe(false);
  });

  it('the point SELECT with a frame: the whole answer kept per writer and frame, no row framed too, never the text of another frame', async () => {
    await sql("INSERT INTO p VALUES (21, 'framed', 0)");
    const toText = (row: Record<string, unknown>): string => JSON.stringify(row);
    const frame = Object.freeze({ before: '{"data":', after: '}' });
    const other = Object.freeze({ before: '<', after: '>' });
    const options = { tenant: DEFAULT_TENANT, params: [21], timeoutMs: 10_000, maxRows: 10 };
    const select = (f?: { before: string; after: string }, params: unknown[] = [21]) =>
      server!.sql.pointSelect('SELECT * FROM p WHERE id = $1', { ...options, params }, toText, f)!.rowsText;
    await sql('SELECT * FROM p WHERE id = $1', [21]);
    for (let round = 0; round < 3; round++) {
      // Each read in turn replaces the row's one memo slot: every answer must still be its own frame's.
      expect(select(frame)).toBe('{"data":[{"id":21,"v":"framed","n":0}]}');
      expect(select(frame)).toBe('{"data":[{"id":21,"v":"framed","n":0}]}');
      expect(select(other)).toBe('<[{"id":21,"v":"framed","n":0}]>');
      expect(select()).toBe('[{"id":21,"v":"framed","n":0}]');
    }
    await sql("UPDATE p SET v = 'moved' WHERE id = 21");
    // Answered once durable: the in-process point SELECT (no read barrier of its own: undefined while behind) after the apply.
    await server!.sql.settled();
    expect(select(frame)).toBe('{"data":[{"id":21,"v":"moved","n":0}]}');
    expect(select(frame, [998])).toBe('{"data":[]}');
    expect(server!.sql.pointSelect('SELECT * FROM p WHERE id = $1', { ...options, maxRows: 0 }, toText, frame)!.rowsText).toBe('{"data":[]}');
  });

  it('a transaction: its writes unseen outside until commit, seen inside, and after commit everywhere', async () => {
    await sql("INSERT INTO p VALUES (10, 'before', 0)");
    expect(await row(10)).toEqual({ id: 10, v: 'before', n: 0 });
    const txn = await call('POST', '/transactions', {});
    expect(txn.status).toBe(201);
    const id = txn.body.transaction_id as string;
    const inTxn = async (text: string): Promise<any[]> => {
      const result = await call('POST', `/transactions/${id}/query`, { sql: text });
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      return result.body.data;
    };
    await inTxn("UPDATE p SET v = 'in txn' WHERE id = 10");
    expect(await inTxn('SELECT * FROM p WHERE id = 10')).toEqual([{ id: 10, v: 'in txn', n: 0 }]);
    expect(await row(10)).toEqual({ id: 10, v: 'before', n: 0 });
    expect((await call('POST', `/transactions/${id}/commit`, {})).status).toBe(200);
    expect(await row(10)).toEqual({ id: 10, v: 'in txn', n: 0 });
    const rolled = (await call('POST', '/transactions', {})).body.transaction_id as string;
    await call('POST', `/transactions/${rolled}/query`, { sql: 'DELETE FROM p WHERE id = 10' });
    expect((await call('POST', `/transactions/${rolled}/rollback`, {})).status).toBe(200);
    expect(await row(10)).toEqual({ id: 10, v: 'in txn', n: 0 });
  });

  it('after a restart and after svcdb replay, then a write', async () => {
    await sql("UPDATE p SET v = 'last' WHERE id = 1");
    expect(await row(1)).toEqual({ id: 1, v: 'last', n: 1 });
    await server!.close();
    server = await startTestServer({ dataDir: dataDir.dir });
    expect(await row(1)).toEqual({ id: 1, v: 'last', n: 1 });
    await server.close();
    server = null;
    const replayed = await runCli(['replay', '--data', dataDir.dir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    server = await startTestServer({ dataDir: dataDir.dir });
    expect(await row(1)).toEqual({ id: 1, v: 'last', n: 1 });
    expect(await row(10)).toEqual({ id: 10, v: 'in txn', n: 0 });
    await sql("UPDATE p SET v = 'after replay' WHERE id = 1");
    expect(await row(1)).toEqual({ id: 1, v: 'after replay', n: 1 });
  });
});
