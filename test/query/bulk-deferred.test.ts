import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import type { KvOp, PreparedWrite } from '../../projections/state-store.js';
import type { QueryResult } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * A record of at least deferredEffectsOpsMin row changes has its effects (the pending overlay's
 * entries, the row-key bound, the store's batch) built after the append, while the log fdatasyncs
 * it (projections/sequencer.ts appendedRows). The next writer must still see every row of it, a
 * read after the answer too, and the projection must write the batch prepared for it.
 */
describe('bulk records whose effects are built while the log syncs them', () => {
  let h: SqlHarness;
  /** The ops count of each store write, and the count of the prepared batch it was given (0: none). */
  const writes: { ops: number; prepared: number }[] = [];
  const rowsMax = 20_000;
  const big = PROJECTION_LIMITS.deferredEffectsOpsMin + 500;
  const json = (table: string, rows: Record<string, unknown>[]): Promise<QueryResult> =>
    h.engine.insertJson({ schema: null, table, rows, returning: [], onConflict: null }, { params: [], timeoutMs: 30_000, maxRows: rowsMax, tenant: 'default' });
  const count = async (sql: string): Promise<number> => Number((await h.rows(sql))[0]!.n);
  /**
   * Resolves once the next record waits for the log's write (the sequencer defers its effects), and
   * holds that wait 50 ms longer: a writer started then queues for the lock while the effects are
   * not built yet (the log itself is untouched: only the sequencer's wait is longer).
   */
  const deferring = (): Promise<void> =>
    new Promise((entered) => {
      const log = h.stack.log;
      const whenWritten = log.whenWritten!.bind(log);
      log.whenWritten = (lsn) => {
        log.whenWritten = whenWritten;
        entered();
        return whenWritten(lsn).then(() => new Promise((resolve) => setTimeout(resolve, 50)));
      };
    });

  beforeAll(async () => {
    h = await openSql();
    // Observed, not replaced: the projection's writes reach the real store as before.
    const store = h.stack.store;
    const write = store.write.bind(store);
    store.write = (ops: readonly KvOp[], prepared?: PreparedWrite) => {
      writes.push({ ops: ops.length, prepared: prepared?.count ?? 0 });
      return write(ops, prepared);
    };
  });
  afterAll(async () => {
    await h.close();
  });

  it('the next writer sees every row and index key of a bulk record still syncing; reads after the answer see them all', async () => {
    await h.q('CREATE TABLE big (id BIGINT PRIMARY KEY, code TEXT UNIQUE, name TEXT NOT NULL)');
    await h.q('CREATE TABLE plain (id BIGINT PRIMARY KEY, name TEXT NOT NULL)');
    const rows = (from: number, n: number, tag: string): Record<string, unknown>[] =>
      Array.from({ length: n }, (_, i) => ({ id: from + i, code: `c${from + i}`, name: `${tag}${from + i}` }));
    writes.length = 0;
    // The second starts once the first is appended and waits for its effects (a writer already waiting
    // when a record is appended makes the sequencer build them at once: test/query/bulk-group-commit.test.ts).
    const firstDeferred = deferring();
    const first = json(
      'plain',
      rows(1, big, 'a').map(({ id, name }) => ({ id, name })),
    );
    await firstDeferred;
    const clash = caught(json('plain', [...rows(big + 1, 10, 'b').map(({ id, name }) => ({ id, name })), { id: big, name: 'again' }]));
    await first;
    expect((await clash).message).toBe('duplicate key value violates unique constraint "plain_pkey"');
    expect(JSON.stringify((await clash).details)).toContain(`(id)=(${big})`);
    expect(await count('SELECT count(*) AS n FROM plain')).toBe(big);
    expect(await h.rows(`SELECT name FROM plain WHERE id = ${big}`)).toEqual([{ name: `a${big}` }]);
    // A lone bulk record (nothing delays the sequencer): the projection writes the batch prepared during
    // the fdatasync, its ops first.
    writes.length = 0;
    await json(
      'plain',
      rows(10 * big, big, 'lone').map(({ id, name }) => ({ id, name })),
    );
    // Answered once durable: the projection's write follows (a read would wait for it at the read barrier).
    await h.stack.projections.readBarrier.wait();
    expect(writes.some((w) => w.prepared === big && w.ops > big)).toBe(true);

    // A unique index: its entries are part of the deferred effects, and the next writer checks them.
    const indexedDeferred = deferring();
    const indexed = json('big', rows(1, big, 'x'));
    await indexedDeferred;
    const codeClash = caught(json('big', [{ id: 100_000, code: `c${big - 1}`, name: 'dup code' }]));
    await indexed;
    expect((await codeClash).message).toBe('duplicate key value violates unique constraint "big_code_key"');
    expect(await count(`SELECT count(*) AS n FROM big WHERE code >= 'c' AND name LIKE 'x%'`)).toBe(big);
    expect(await h.rows(`SELECT id, name FROM big WHERE code = 'c${big - 1}'`)).toEqual([{ id: big - 1, name: `x${big - 1}` }]);
  });

  it('sequence values and the row-key bound follow a bulk record still syncing', async () => {
    await h.q('CREATE TABLE serial (id BIGSERIAL PRIMARY KEY, k INTEGER NOT NULL)');
    const bulkDeferred = deferring();
    const bulk = json(
      'serial',
      Array.from({ length: big }, (_, i) => ({ k: i })),
    );
    await bulkDeferred;
    // Queued behind the bulk insert: its key comes from the sequence the bulk record advanced.
    const after = h.q('INSERT INTO serial (k) VALUES (-1) RETURNING id');
    await bulk;
    expect((await after).rows).toEqual([{ id: big + 1 }]);
    // Keys above the bulk record's last one are new (the bound rose with it); its own last one is not.
    const again = caught(json('serial', [...Array.from({ length: 300 }, (_, i) => ({ id: big + 10 + i, k: 0 })), { id: big, k: 0 }]));
    expect((await again).message).toBe('duplicate key value violates unique constraint "serial_pkey"');
    expect(await count('SELECT count(*) AS n FROM serial')).toBe(big + 1);
  });
});
