import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeKey } from '../../core/key-encoding.js';
import { silentLogger } from '../../core/logger.js';
import { rebuildProjections } from '../../projections/index.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

const int4 = { name: 'int4' } as const;
const pkOf = (id: number): string => Buffer.from(encodeKey([int4], [id])).toString('hex');

interface Db {
  stack: Stack;
  q(sql: string, params?: unknown[]): Promise<unknown>;
  /** Ids of the k nearest rows by the hnsw index `name`, straight from the projection. */
  nearest(name: string, vector: number[], k: number): Promise<string[]>;
}

async function openDb(dir: string, options: { vectorCheckpointRecordsMax?: number } = {}): Promise<Db> {
  const stack = await openStack(dir, options);
  const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
  return {
    stack,
    q: (sql, params = []) => engine.execute(sql, { params, timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' }),
    async nearest(name, vector, k) {
      // A read of the projections begins at the read barrier (writes are answered before they are applied).
      await stack.projections.readBarrier.wait();
      const table = stack.projections.catalog.tableByName('default', 'public', 'items')!;
      const index = table.def.indexes.find((i) => i.name === name)!;
      const hits = (await stack.projections.vectors.search(index.id, new Float32Array(vector), k, 100)) ?? [];
      return hits.map((h) => Buffer.from(h.pk).toString('hex'));
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function scratch(): Promise<string> {
  const { dir, remove } = await tempDir('svcdb-vec-');
  cleanups.push(remove);
  return dir;
}

async function seed(db: Db): Promise<void> {
  await db.q('CREATE TABLE items (id INT PRIMARY KEY, embedding VECTOR(3))');
  await db.q("INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0,0,1]')");
  await db.q('CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_l2_ops) WITH (m = 8, ef_construction = 32)');
}

/** The seeded items with 3,000 more spread over the space (searches of every beam width find rows), its hnsw index and the projection. */
async function spreadItems() {
  const db = await openDb(await scratch());
  cleanups.push(() => db.stack.close());
  await seed(db);
  const values = Array.from({ length: 3000 }, (_v, i) => `(${i + 10}, '[${i % 97},${i % 89},${i % 83}]')`).join(', ');
  await db.q(`INSERT INTO items VALUES ${values}`);
  await db.stack.projections.readBarrier.wait();
  const table = db.stack.projections.catalog.tableByName('default', 'public', 'items')!;
  const index = table.def.indexes.find((i) => i.name === 'items_hnsw')!;
  return { db, index, vectors: db.stack.projections.vectors };
}

describe('vector projection', () => {
  it('without an index, writes its checkpoint (a manifest) beside the apply loop when due, and at once when retention asks', async () => {
    const dir = await scratch();
    const db = await openDb(dir, { vectorCheckpointRecordsMax: 2 });
    cleanups.push(() => db.stack.close());
    const { vectors, log } = db.stack.projections;
    const manifest = (): { lsn: number; indexes: unknown[] } =>
      JSON.parse(readFileSync(path.join(db.stack.layout.vectorDir, 'manifest.json'), 'utf8')) as { lsn: number; indexes: unknown[] };
    await db.q('CREATE TABLE plain (id INT PRIMARY KEY)');
    // Four records: due after the second and the fourth (records max 2), written beside the apply loop.
    for (let id = 1; id <= 3; id++) await db.q('INSERT INTO plain VALUES ($1)', [id]);
    await vi.waitFor(() => expect(vectors.durableOffset).toBe(log.headLsn), { timeout: 30_000, interval: 10 });
    expect(manifest()).toMatchObject({ lsn: log.headLsn, indexes: [] });
    // One more: below the records max and the interval, so no checkpoint follows it on a timer...
    await db.q('INSERT INTO plain VALUES (4)');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(vectors.durableOffset).toBe(log.headLsn - 1);
    // ...but one asked for (log retention) is written and durable when the call resolves.
    expect(await vectors.checkpointIfIndexFree()).toBe(log.headLsn);
    expect(manifest()).toMatchObject({ lsn: log.headLsn, indexes: [] });
  });

  it('backfills an index created on a filled table, then follows inserts, updates and deletes', async () => {
    const db = await openDb(await scratch());
    cleanups.push(() => db.stack.close());
    await seed(db);
    expect(await db.nearest('items_hnsw', [0.9, 0.1, 0], 1)).toEqual([pkOf(1)]);
    await db.q("INSERT INTO items VALUES (4, '[5,5,5]')");
    expect(await db.nearest('items_hnsw', [5, 5, 4], 1)).toEqual([pkOf(4)]);
    await db.q("UPDATE items SET embedding = '[-1,-1,-1]' WHERE id = 4");
    expect(await db.nearest('items_hnsw', [5, 5, 4], 4)).not.toContain(undefined);
    expect(await db.nearest('items_hnsw', [-1, -1, -1], 1)).toEqual([pkOf(4)]);
    await db.q('DELETE FROM items WHERE id = 1');
    expect(await db.nearest('items_hnsw', [1, 0, 0], 10)).not.toContain(pkOf(1));
    expect(await db.nearest('items_hnsw', [1, 0, 0], 10)).toHaveLength(3);
    await db.q('UPDATE items SET embedding = NULL WHERE id = 2');
    expect(await db.nearest('items_hnsw', [0, 1, 0], 10)).not.toContain(pkOf(2));
  });

  it('grows past its first capacity and reuses deleted slots', async () => {
    const db = await openDb(await scratch());
    cleanups.push(() => db.stack.close());
    await seed(db);
    const values = Array.from({ length: 3000 }, (_v, i) => `(${i + 10}, '[${i},${i % 7},1]')`).join(', ');
    await db.q(`INSERT INTO items VALUES ${values}`);
    expect(await db.nearest('items_hnsw', [2500, 1, 1], 1)).toEqual([pkOf(2510)]);
    await db.q('DELETE FROM items WHERE id >= 10');
    await db.q(`INSERT INTO items VALUES ${values}`);
    expect(await db.nearest('items_hnsw', [100, 2, 1], 1)).toEqual([pkOf(110)]);
  });

  it('answers searches issued together (one message to the worker) each with its own nearest rows, in order with the writes', async () => {
    const db = await openDb(await scratch());
    cleanups.push(() => db.stack.close());
    await seed(db);
    const values = Array.from({ length: 200 }, (_v, i) => `(${i + 10}, '[${i},${i % 7},1]')`).join(', ');
    await db.q(`INSERT INTO items VALUES ${values}`);
    const queries = Array.from({ length: 50 }, (_v, i) => [i * 4, (i * 4) % 7, 1]);
    const alone: string[][] = [];
    for (const q of queries) alone.push(await db.nearest('items_hnsw', q, 3));
    expect(alone[10]![0]).toBe(pkOf(50));
    // All in the same tick: they share one message; each must get its own answer, not a neighbour's.
    expect(await Promise.all(queries.map((q) => db.nearest('items_hnsw', q, 3)))).toEqual(alone);
    // A write between searches of one batch: the search after it sees it, the one before does not.
    const before = db.nearest('items_hnsw', [1000, 1000, 1000], 1);
    const { vectors } = db.stack.projections;
    const table = db.stack.projections.catalog.tableByName('default', 'public', 'items')!;
    const index = table.def.indexes.find((i) => i.name === 'items_hnsw')!;
    await db.q("INSERT INTO items VALUES (5000, '[1000,1000,1000]')");
    await db.stack.projections.readBarrier.wait();
    const after = vectors.search(index.id, new Float32Array([1000, 1000, 1000]), 1, 100);
    expect(await before).not.toEqual([pkOf(5000)]);
    expect((await after)?.map((h) => Buffer.from(h.pk).toString('hex'))).toEqual([pkOf(5000)]);
  });

  it('answers every search of one message right when the worker sends the answers in several (a wide beam among narrow ones)', async () => {
    const { index, vectors } = await spreadItems();
    // Wide searches (ef 1000, k 200: well past the worker's hold time) between narrow ones (ef 10, k 1).
    const asks = Array.from({ length: 40 }, (_v, i) => ({
      vector: [i % 97, (i * 3) % 89, (i * 7) % 83],
      k: i % 4 === 0 ? 200 : 1,
      ef: i % 4 === 0 ? 1000 : 10,
    }));
    const ask = async (a: (typeof asks)[number]) =>
      ((await vectors.search(index.id, new Float32Array(a.vector), a.k, a.ef)) ?? []).map((h) => `${Buffer.from(h.pk).toString('hex')}:${h.distance}`);
    const alone: string[][] = [];
    for (const a of asks) alone.push(await ask(a));
    expect(alone[0]).toHaveLength(200);
    expect(await Promise.all(asks.map(ask))).toEqual(alone);
  });

  it('answers searches of graphs of different dimensions packed in one message, each with its own hits and distances, a dropped graph with none', async () => {
    const db = await openDb(await scratch());
    cleanups.push(() => db.stack.close());
    await seed(db);
    await db.q('CREATE TABLE wide (id INT PRIMARY KEY, embedding VECTOR(5))');
    const wide = Array.from({ length: 300 }, (_v, i) => `(${i}, '[${i % 13},${i % 11},${i % 7},${i % 5},1]')`).join(', ');
    await db.q(`INSERT INTO wide VALUES ${wide}`);
    await db.q('CREATE INDEX wide_hnsw ON wide USING hnsw (embedding vector_l2_ops) WITH (m = 8, ef_construction = 32)');
    await db.q('CREATE TABLE gone (id INT PRIMARY KEY, embedding VECTOR(2))');
    await db.q("INSERT INTO gone VALUES (1, '[1,2]')");
    await db.q('CREATE INDEX gone_hnsw ON gone USING hnsw (embedding vector_l2_ops)');
    const { catalog, vectors } = db.stack.projections;
    const indexId = (table: string, name: string): number => catalog.tableByName('default', 'public', table)!.def.indexes.find((i) => i.name === name)!.id;
    const [items, wideId, goneId] = [indexId('items', 'items_hnsw'), indexId('wide', 'wide_hnsw'), indexId('gone', 'gone_hnsw')];
    const asks = Array.from({ length: 24 }, (_v, i) =>
      i % 3 === 0
        ? { id: items, vector: [i % 2, 1, 0], k: 1 + (i % 3) }
        : i % 3 === 1
          ? { id: wideId, vector: [i % 13, i % 11, i % 7, i % 5, 1], k: 1 + (i % 5) }
          : { id: goneId, vector: [1, 2], k: 2 },
    );
    const ask = async (a: (typeof asks)[number]) =>
      ((await vectors.search(a.id, new Float32Array(a.vector), a.k, 50)) ?? []).map((h) => `${Buffer.from(h.pk).toString('hex')}:${h.distance}`);
    const alone: string[][] = [];
    for (const a of asks) alone.push(await ask(a));
    expect(alone[1]).toHaveLength(2);
    expect(alone[1]![0]).toBe(`${Buffer.from(encodeKey([int4], [1])).toString('hex')}:0`);
    expect(alone[2]).toHaveLength(1);
    // All in one tick: one message, the searches packed; the drop goes between them.
    const first = asks.map(ask);
    await db.q('DROP INDEX gone_hnsw');
    const second = asks.map(ask);
    expect(await Promise.all(first)).toEqual(alone);
    expect(await Promise.all(second)).toEqual(alone.map((hits, i) => (i % 3 === 2 ? [] : hits)));
  });

  it('sends the answers gathered before a search expected to take long (a wide beam) without waiting for it', async () => {
    const { index, vectors } = await spreadItems();
    const narrow = (i: number) => vectors.search(index.id, new Float32Array([i % 97, (i * 3) % 89, 1]), 1, 10)!;
    // Narrow searches first, alone: the worker learns what a unit of beam costs on this graph.
    for (let i = 0; i < 20; i++) await narrow(i);
    for (let round = 0; round < 3; round++) {
      // One message: narrow searches, then one whose beam (5,000) is expected to take far past the hold.
      const first = Array.from({ length: 10 }, (_v, i) => narrow(i));
      let wideAnswered = false;
      const wide = vectors.search(index.id, new Float32Array([1, 2, 3]), 500, 5000)!.then((hits) => {
        wideAnswered = true;
        return hits;
      });
      expect((await Promise.all(first)).every((hits) => hits?.length === 1)).toBe(true);
      // The narrow answers came in a message of their own, before the wide search's.
      expect(wideAnswered).toBe(false);
      expect(await wide).toHaveLength(500);
    }
  });

  it('holds searches issued while the worker is busy, then sends them together: each its own answer, in order with writes', async () => {
    const { db, index, vectors } = await spreadItems();
    const ask = async (vector: number[], k: number, ef: number) =>
      ((await vectors.search(index.id, new Float32Array(vector), k, ef)) ?? []).map((h) => `${Buffer.from(h.pk).toString('hex')}:${h.distance}`);
    const narrow = Array.from({ length: 30 }, (_v, i) => [(i * 5) % 97, (i * 3) % 89, (i * 7) % 83]);
    const alone: string[][] = [];
    for (const q of narrow) alone.push(await ask(q, 2, 10));
    for (let round = 0; round < 3; round++) {
      // A wide search goes first (sent at the end of this turn); the narrow ones come in the next turns, while it runs.
      const wide = ask([1, 2, 3], 300, 1000);
      await new Promise((resolve) => setImmediate(resolve));
      const held = narrow.slice(0, 15).map((q) => ask(q, 2, 10));
      await new Promise((resolve) => setImmediate(resolve));
      const more = narrow.slice(15).map((q) => ask(q, 2, 10));
      expect(await wide).toHaveLength(300);
      expect([...(await Promise.all(held)), ...(await Promise.all(more))]).toEqual(alone);
    }
    // A write while searches are held: those issued before it do not see it, one issued after it does.
    const busy = ask([1, 2, 3], 300, 1000);
    await new Promise((resolve) => setImmediate(resolve));
    const before = ask([1000, 1000, 1000], 1, 10);
    await db.q("INSERT INTO items VALUES (5000, '[1000,1000,1000]')");
    await db.stack.projections.readBarrier.wait();
    const after = ask([1000, 1000, 1000], 1, 10);
    await busy;
    expect((await before)[0]).not.toMatch(new RegExp(`^${pkOf(5000)}:`));
    expect((await after)[0]).toMatch(new RegExp(`^${pkOf(5000)}:`));
  });

  it('answers a search with the rows of the state it was issued against, however late its answer comes (changes applied before the answer arrives)', async () => {
    const { index, vectors } = await spreadItems();
    const graph = vectors.index(index.id)!;
    const ask = async (vector: number[], k: number, ef: number) =>
      ((await vectors.search(index.id, new Float32Array(vector), k, ef)) ?? []).map((h) => `${Buffer.from(h.pk).toString('hex')}:${h.distance}`);
    const queries = Array.from({ length: 20 }, (_v, i) => [(i * 5) % 97, (i * 3) % 89, (i * 7) % 83]);
    const alone: string[][] = [];
    for (const q of queries) alone.push(await ask(q, 3, 20));
    const pkOfHit = (hit: string): Uint8Array => Buffer.from(hit.split(':')[0]!, 'hex');
    // The changes the projection applies for a DELETE, an UPDATE and a DROP INDEX, made on the main thread before
    // any answer can come back (the same turn): as when the worker thread is slow to answer (a loaded machine).
    const changeAll = (): void => {
      for (const hits of alone.slice(0, 10)) for (const hit of hits) graph.remove(pkOfHit(hit));
      for (const hits of alone.slice(10, 15)) for (const hit of hits) graph.upsert(pkOfHit(hit), new Float32Array([-50, -50, -50]));
      graph.flush();
    };
    // Sent to the worker at once, then changed.
    const first = queries.map((q) => ask(q, 3, 20));
    changeAll();
    expect(await Promise.all(first)).toEqual(alone);
    // Held on the main thread behind an unanswered wide search, then changed and dropped: still the state they were issued against.
    const wide = ask([1, 2, 3], 300, 1000);
    await new Promise((resolve) => setImmediate(resolve));
    const held = queries.slice(15).map((q) => ask(q, 3, 20));
    for (const hits of alone.slice(15)) graph.remove(pkOfHit(hits[0]!));
    graph.clear();
    expect(await Promise.all(held)).toEqual(alone.slice(15));
    expect(await wide).toHaveLength(300);
    // Issued after the changes: they see them (the graph is gone).
    expect(await ask(queries[0]!, 3, 20)).toEqual([]);
  });

  it('reloads from its checkpoint and catches up from the log after a restart', async () => {
    const dir = await scratch();
    let db = await openDb(dir, { vectorCheckpointRecordsMax: 2 });
    await seed(db);
    // A known start: every record so far checkpointed (before the index existed, empty checkpoints
    // are written beside the apply loop, so how many records the seed left uncounted depends on the disk's pace).
    await db.stack.projections.vectors.checkpoint();
    expect(db.stack.projections.vectors.durableOffset).toBe(3);
    await db.q("INSERT INTO items VALUES (4, '[7,7,7]')");
    await db.q("INSERT INTO items VALUES (6, '[0,7,0]')");
    // Two records: the checkpoint is due, written after the in-memory apply (which the write waited
    // for); wait for it, however slow the disk.
    await vi.waitFor(() => expect(db.stack.projections.vectors.durableOffset).toBe(5), { timeout: 30_000, interval: 10 });
    // Written after the last checkpoint: only the log has it until the next one.
    await db.q("INSERT INTO items VALUES (5, '[-7,-7,-7]')");
    expect(db.stack.projections.vectors.durableOffset).toBe(5);
    // Close without the stop-time checkpoint, as after a crash.
    (db.stack.projections.vectors as unknown as { checkpoint: () => Promise<void> }).checkpoint = async () => {};
    await db.stack.close();
    db = await openDb(dir);
    cleanups.push(() => db.stack.close());
    expect(await db.nearest('items_hnsw', [7, 7, 7], 1)).toEqual([pkOf(4)]);
    expect(await db.nearest('items_hnsw', [0, 7, 0], 1)).toEqual([pkOf(6)]);
    expect(await db.nearest('items_hnsw', [-7, -7, -7], 1)).toEqual([pkOf(5)]);
    expect(readdirSync(db.stack.layout.vectorDir)).toContain('manifest.json');
  });

  it('drops the index with DROP INDEX and DROP TABLE', async () => {
    const db = await openDb(await scratch());
    cleanups.push(() => db.stack.close());
    await seed(db);
    const table = db.stack.projections.catalog.tableByName('default', 'public', 'items')!;
    const id = table.def.indexes.find((i) => i.name === 'items_hnsw')!.id;
    await db.q('DROP INDEX items_hnsw');
    expect(db.stack.projections.vectors.index(id)).toBeUndefined();
    await db.q('CREATE INDEX items_hnsw2 ON items USING hnsw (embedding vector_l2_ops)');
    const id2 = db.stack.projections.catalog.tableByName('default', 'public', 'items')!.def.indexes.find((i) => i.name === 'items_hnsw2')!.id;
    expect(db.stack.projections.vectors.index(id2)?.size).toBe(3);
    await db.q('DROP TABLE items');
    expect(db.stack.projections.vectors.index(id2)).toBeUndefined();
    await db.stack.projections.vectors.checkpoint();
    expect(readdirSync(db.stack.layout.vectorDir)).toEqual(['manifest.json']);
  });

  it('is rebuilt by replay', async () => {
    const dir = await scratch();
    const db = await openDb(dir);
    await seed(db);
    await db.q("INSERT INTO items VALUES (4, '[3,3,3]')");
    await db.stack.projections.stop();
    await rm(db.stack.layout.vectorDir, { recursive: true });
    await rebuildProjections({
      log: db.stack.log,
      layout: db.stack.layout,
      liveStore: db.stack.store,
      batchBytesMax: 4096,
      logger: silentLogger,
      onProgress: () => {},
    });
    await db.stack.log.close();
    expect(existsSync(`${db.stack.layout.vectorDir}/manifest.json`)).toBe(true);
    const again = await openDb(dir);
    cleanups.push(() => again.stack.close());
    expect(await again.nearest('items_hnsw', [3, 3, 3], 1)).toEqual([pkOf(4)]);
  });
});
