import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SQL_LIMITS } from '../../query/index.js';
import type { KeyRead } from '../../query/index.js';
import { holdApply, within } from '../helpers/hold-apply.js';
import { caught, openSql, type SqlHarness } from '../query/helpers.js';

/**
 * GET /tables/{t}/rows/{id}'s direct read (SqlEngine.readByKey, readTextByKey) waits at the read
 * barrier like every read, but its route gives it no deadline: it gets the default statement
 * timeout (limits.readTimeoutMsDefault, 30 s in the server; 1 s here) and then fails as a
 * SELECT waiting there that long fails (QUERY_TIMEOUT, statement timeout), leaving no waiter in
 * the tracker. Before, it waited for as long as the apply took. SqlEngine.settled(), the wait of the
 * routes that read row counts from the catalog's stats, is given no timeout either, and gets the same.
 */
describe('a read by key (and settled()) behind the read barrier ends at the default statement timeout', () => {
  const TIMEOUT_MS = 1000;
  let h: SqlHarness;
  let read: KeyRead;

  beforeAll(async () => {
    h = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, readTimeoutMsDefault: TIMEOUT_MS } });
    await h.q('CREATE TABLE plain (id INT PRIMARY KEY, v INT NOT NULL)');
    await h.q('INSERT INTO plain VALUES (1, 10)');
    const table = h.stack.projections.tables.catalog.tableByName('default', 'public', 'plain')!.def;
    read = { table, key: ['1'], columns: ['id', 'v'] };
  });
  afterAll(async () => {
    await h?.close();
  });

  it('readByKey, readTextByKey and settled() answer QUERY_TIMEOUT in time while the tables apply is held, then see the write', async () => {
    const tracker = h.stack.projections.tablesApplied;
    const toText = (row: unknown): string => JSON.stringify(row);
    // Cached before the write: a read that did not wait would answer the old row.
    expect(await Promise.resolve(h.engine.readTextByKey(read, toText))).toBe('{"id":1,"v":10}');
    const release = holdApply(h.stack.projections, 'tables');
    try {
      await h.q('UPDATE plain SET v = 11 WHERE id = 1');
      expect(h.stack.projections.readBarrier.tablesBehind).toBe(true);
      const timeout = { code: 'QUERY_TIMEOUT', message: 'canceling statement due to statement timeout', details: { reason: 'timeout' } };

      const started = Date.now();
      const byKey = h.engine.readByKey(read);
      expect(byKey).toBeInstanceOf(Promise);
      const outcome = await within(caught(byKey as Promise<unknown>), 5000);
      expect(outcome).toEqual(timeout);
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS);

      const text = h.engine.readTextByKey(read, toText);
      expect(await within(caught(text as Promise<unknown>), 5000)).toEqual(timeout);

      // Many reads given up while the apply is held: none stays in the tracker.
      const many = Array.from({ length: 200 }, () => caught(h.engine.readTextByKey(read, toText) as Promise<unknown>));
      for (const error of await Promise.all(many)) expect(error.code).toBe('QUERY_TIMEOUT');
      expect(tracker.waiting).toBe(0);

      // settled() (the row counts of the table routes, which read the catalog's stats) waits as long and no longer.
      const stats = h.engine.settled();
      expect(stats).toBeInstanceOf(Promise);
      expect(await within(caught(stats!), 5000)).toEqual(timeout);
      expect(tracker.waiting).toBe(0);

      // A read that the apply reaches before its deadline answers the new row.
      const caughtUp = h.engine.readTextByKey(read, toText);
      const settled = h.engine.settled();
      release();
      expect(await caughtUp).toBe('{"id":1,"v":11}');
      await settled;
    } finally {
      release();
    }
    expect(await Promise.resolve(h.engine.readByKey(read))).toEqual({ id: 1, v: 11 });
    expect(tracker.waiting).toBe(0);
  });
});
