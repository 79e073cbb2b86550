import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRowInto } from '../../core/row-codec.js';
import { keys, RowVersionedStore, type KvOp, type RangeOptions, type StateStore, type StoreSnapshot } from '../../projections/index.js';
import { DEFAULT_SQL_LIMITS } from '../../query/index.js';
import { ScanCache } from '../../query/exec/scan-cache.js';
import { TableRows } from '../../query/exec/table-rows.js';
import type { QValue } from '../../query/types/contract.js';
import { itemImage, itemKey, itemsTable } from '../helpers/stack.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * The scan cache follows writes (query/exec/scan-cache.ts): a cached table moves to the next
 * version by applying each write's row changes instead of being read again. Whatever the writes
 * and however they interleave with reads, a scan must return exactly its snapshot's rows.
 */

/** Writes the cache followed (the engine's stats carry the cache's counters; its type names the common ones). */
const patchesOf = (sql: SqlHarness): number => sql.engine.scanCacheStats().patches;

const pkOf = (id: number): Uint8Array => Uint8Array.from([id >> 8, id & 0xff]);

describe('TableRows', () => {
  it('after any patches, holds what a sorted map holds, and versions already handed out never change', () => {
    const patch = fc.array(fc.record({ id: fc.integer({ min: 0, max: 3000 }), value: fc.option(fc.integer(), { nil: null }) }), { maxLength: 700 });
    fc.assert(
      fc.property(fc.array(patch, { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 3000 }), (patches, a, b) => {
        let rows = TableRows.empty;
        let model = new Map<number, number>();
        const versions: [TableRows, Map<number, number>][] = [];
        for (const changes of patches) {
          const net = new Map(changes.map((c) => [c.id, c.value]));
          const sorted = [...net].sort((x, y) => x[0] - y[0]);
          rows = rows.patched(sorted.map(([id, value]) => ({ pk: pkOf(id), row: value === null ? null : [id, value] })));
          model = new Map(model);
          for (const [id, value] of sorted) {
            if (value === null) model.delete(id);
            else model.set(id, value);
          }
          versions.push([rows, model]);
        }
        for (const [version, state] of versions) {
          const want = [...state].sort((x, y) => x[0] - y[0]);
          expect(version.count).toBe(want.length);
          expect([...version.batches({ reverse: false }, 100)].flat()).toEqual(want);
          const [lo, hi] = [Math.min(a, b), Math.max(a, b)];
          const inRange = want.filter(([id]) => id >= lo && id < hi);
          expect([...version.batches({ gte: pkOf(lo), lt: pkOf(hi), reverse: true }, 7)].flat()).toEqual(inRange.reverse());
          expect(version.get(pkOf(a))).toEqual(state.has(a) ? [a, state.get(a)] : null);
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** A store whose writes wait at a gate before or after reaching LevelDB, to take snapshots mid-write. */
class GatedStore implements StateStore {
  private gate: Promise<void> | null = null;
  private open: () => void = () => undefined;
  private where: 'before' | 'after' = 'before';
  constructor(private readonly inner: StateStore) {}
  hold(where: 'before' | 'after'): () => void {
    this.where = where;
    this.gate = new Promise((resolve) => (this.open = resolve));
    return () => this.open();
  }
  get(key: Uint8Array, snapshot?: StoreSnapshot) {
    return this.inner.get(key, snapshot);
  }
  getMany(k: readonly Uint8Array[], snapshot?: StoreSnapshot) {
    return this.inner.getMany(k, snapshot);
  }
  entries(range: RangeOptions) {
    return this.inner.entries(range);
  }
  async write(ops: readonly KvOp[]) {
    const gate = this.gate;
    this.gate = null;
    if (gate && this.where === 'before') await gate;
    await this.inner.write(ops);
    if (gate && this.where === 'after') await gate;
  }
  sync() {
    return this.inner.sync();
  }
  isOpen() {
    return this.inner.isOpen();
  }
  snapshot() {
    return this.inner.snapshot();
  }
  close() {
    return this.inner.close();
  }
}

describe('a snapshot taken while a write is in flight', () => {
  it('learns which side of the write it sees by reading one key, for inserts, updates and deletes', async () => {
    const sql = await openSql();
    try {
      const gated = new GatedStore(sql.stack.store);
      const store = new RowVersionedStore(gated);
      const table = itemsTable(77);
      const cache = new ScanCache(1000);
      cache.follow(store);
      const row = (id: number, score: number) => ({ id: BigInt(id), name: `n${id}`, score });
      const put = (id: number, score: number): KvOp => ({
        type: 'put',
        key: keys.rowKey(table.id, itemKey(BigInt(id))),
        value: itemImage(table, row(id, score)),
      });
      await store.write([put(1, 10), put(2, 20)]);
      const decode = (image: Uint8Array) => decodeRowInto(image, [1, 2, 3], [null, null, null]) as QValue[];
      const fill = cache.beginFill(table, 2)!;
      cache.endFill(fill, [itemKey(1n), itemKey(2n)], [decode(itemImage(table, row(1, 10))), decode(itemImage(table, row(2, 20)))]);
      const writes: KvOp[][] = [
        [put(3, 30)], // an insert
        [put(1, 11)], // an update
        [{ type: 'del', key: keys.rowKey(table.id, itemKey(2n)) }], // a delete
        [put(1, 11), put(4, 40)], // an unchanged row first, then an insert
      ];
      let version = 2;
      for (const ops of writes) {
        for (const where of ['before', 'after'] as const) {
          const release = gated.hold(where);
          const writing = store.write(ops);
          await new Promise((resolve) => setTimeout(resolve, 20)); // 'after': LevelDB has the batch
          const snapshot = store.snapshot();
          expect(store.rowVersion(snapshot, table.id)).toBeNull();
          const write = store.rowWriteInFlight(snapshot, table.id)!;
          expect(write.from).toBe(version);
          const seen = await cache.versionSeen(table, write, (pk) => store.get(keys.rowKey(table.id, pk), snapshot));
          expect(seen, `${where} ${JSON.stringify(ops.map((o) => o.type))}`).toBe(where === 'before' ? version : version + 2);
          // What the cache serves at that version is what the snapshot holds.
          const cached = [...cache.get(table, seen!)!.batches({ reverse: false }, 100)].flat();
          const stored: QValue[][] = [];
          for await (const batch of store.entries({ ...keys.idRange(keys.KeySpace.Row, table.id), snapshot })) stored.push(...batch.map(([, v]) => decode(v)));
          expect(cached).toEqual(stored);
          release();
          await writing;
          await snapshot.close();
          version += 2;
        }
      }
      expect(cache.counts.patches).toBeGreaterThan(0);
    } finally {
      await sql.close();
    }
  });
});

type Write = { kind: 'upsert'; ids: number[]; v: number } | { kind: 'update'; mod: number; rem: number } | { kind: 'delete'; mod: number; rem: number };

const write: fc.Arbitrary<Write> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('upsert' as const),
      ids: fc.array(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 20 }),
      v: fc.integer({ min: -9, max: 9 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('update' as const), mod: fc.integer({ min: 1, max: 5 }), rem: fc.integer({ min: 0, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), mod: fc.integer({ min: 2, max: 6 }), rem: fc.integer({ min: 0, max: 5 }) }) },
);

function applyWrite(state: Map<number, number>, w: Write): Map<number, number> {
  const next = new Map(state);
  if (w.kind === 'upsert') for (const id of new Set(w.ids)) next.set(id, w.v);
  else {
    for (const [id, v] of state) {
      if (id % w.mod !== w.rem) continue;
      if (w.kind === 'update') next.set(id, v + 1);
      else next.delete(id);
    }
  }
  return next;
}

function statementOf(t: string, w: Write): string {
  if (w.kind === 'upsert')
    return `INSERT INTO ${t} (id, v) VALUES ${[...new Set(w.ids)].map((id) => `(${id}, ${w.v})`).join(', ')} ON CONFLICT (id) DO UPDATE SET v = excluded.v`;
  if (w.kind === 'update') return `UPDATE ${t} SET v = v + 1 WHERE id % ${w.mod} = ${w.rem}`;
  return `DELETE FROM ${t} WHERE id % ${w.mod} = ${w.rem}`;
}

const render = (state: Map<number, number>): string => JSON.stringify([...state].sort((a, b) => a[0] - b[0]));

describe('scans under concurrent writes', () => {
  it('every scan returns exactly one state between the writes acknowledged before it and those begun before it ended', async () => {
    const sql = await openSql();
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(write, { minLength: 5, maxLength: 25 }), async (writes) => {
          const t = `f${run++}`;
          await sql.q(`CREATE TABLE ${t} (id INTEGER PRIMARY KEY, v INTEGER)`);
          const states = [new Map<number, number>()];
          for (const w of writes) states.push(applyWrite(states[states.length - 1]!, w));
          const rendered = states.map(render);
          let acked = 0;
          let begun = 0;
          const writer = (async () => {
            for (const w of writes) {
              begun += 1;
              await sql.q(statementOf(t, w));
              acked += 1;
            }
          })();
          const reader = async (): Promise<void> => {
            while (acked < writes.length) {
              // A client's round trip: a scan served from memory never waits for I/O, so without it the readers would starve the writer.
              await new Promise((resolve) => setImmediate(resolve));
              const from = acked;
              const rows = await sql.rows(`SELECT id, v FROM ${t}`);
              const got = render(new Map(rows.map((r) => [r.id as number, r.v as number])));
              const k = rendered.indexOf(got, from);
              expect(k, `a scan saw ${got}`).toBeGreaterThanOrEqual(from);
              expect(k).toBeLessThanOrEqual(begun);
            }
          };
          await Promise.all([writer, reader(), reader(), reader()]);
          expect(await sql.rows(`SELECT id, v FROM ${t} ORDER BY id`)).toEqual(JSON.parse(rendered[writes.length]!).map(([id, v]: number[]) => ({ id, v })));
        }),
        { numRuns: 15 },
      );
      const stats = sql.engine.scanCacheStats();
      expect(patchesOf(sql)).toBeGreaterThan(0);
      expect(stats.hits).toBeGreaterThan(stats.fills);
    } finally {
      await sql.close();
    }
  }, 120_000);

  it('a transaction keeps reading its snapshot while the cache follows later commits', async () => {
    const sql = await openSql({
      transactions: { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 1000 },
    });
    try {
      await sql.q('CREATE TABLE acct (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)');
      await sql.q(`INSERT INTO acct VALUES ${Array.from({ length: 50 }, (_, i) => `(${i}, 10)`).join(', ')}`);
      expect(await sql.rows('SELECT count(*) AS n, sum(balance) AS s FROM acct')).toEqual([{ n: 50, s: 500 }]); // fills the cache
      const { transactionId } = await sql.transactions!.begin({ tenant: 'default', isolation: 'repeatable_read', readOnly: true });
      const inTxn = (text: string) =>
        sql.engine.execute(text, { params: [], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default', transaction: { id: transactionId } });
      expect((await inTxn('SELECT count(*) AS n, sum(balance) AS s FROM acct')).rows).toEqual([{ n: 50, s: 500 }]);
      for (let i = 0; i < 4; i++) {
        await sql.q(`INSERT INTO acct VALUES (${100 + i}, 1)`);
        await sql.q(`UPDATE acct SET balance = balance + 1 WHERE id = ${i}`);
        await sql.q(`DELETE FROM acct WHERE id = ${40 + i}`);
        // Outside: every commit; inside: still the snapshot, however many versions the cache moved on.
        expect(await sql.rows('SELECT count(*) AS n, sum(balance) AS s FROM acct')).toEqual([{ n: 50, s: 500 + 2 * (i + 1) - 10 * (i + 1) }]);
        expect((await inTxn('SELECT count(*) AS n, sum(balance) AS s FROM acct')).rows).toEqual([{ n: 50, s: 500 }]);
        expect((await inTxn('SELECT id, balance FROM acct WHERE id BETWEEN 0 AND 3 ORDER BY id')).rows).toEqual(
          [0, 1, 2, 3].map((id) => ({ id, balance: 10 })),
        );
      }
      await sql.transactions!.rollback(transactionId, { tenant: 'default' });
      expect(patchesOf(sql)).toBeGreaterThan(0);
    } finally {
      await sql.close();
    }
  });

  it('stays within its row budget while a cached table grows past it, and reads stay right', async () => {
    const rowsMax = 120;
    const sql = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, scanCacheRowsMax: rowsMax } });
    try {
      await sql.q('CREATE TABLE g (id INTEGER PRIMARY KEY, v INTEGER)');
      await sql.q('CREATE TABLE h (id INTEGER PRIMARY KEY)');
      await sql.q(`INSERT INTO h VALUES ${Array.from({ length: 30 }, (_, i) => `(${i})`).join(', ')}`);
      expect(await sql.rows('SELECT count(*) AS n FROM h')).toEqual([{ n: 30 }]);
      for (let id = 0; id < 150; id += 5) {
        await sql.q(`INSERT INTO g VALUES ${[0, 1, 2, 3, 4].map((i) => `(${id + i}, ${i})`).join(', ')}`);
        expect(await sql.rows('SELECT count(*) AS n, sum(v) AS s FROM g')).toEqual([{ n: id + 5, s: ((id + 5) / 5) * 10 }]);
        expect(await sql.rows('SELECT count(*) AS n FROM h')).toEqual([{ n: 30 }]);
        expect(sql.engine.scanCacheStats().rows).toBeLessThanOrEqual(rowsMax);
      }
      expect(patchesOf(sql)).toBeGreaterThan(0);
    } finally {
      await sql.close();
    }
  });
});
