// A record of >= deferredEffectsOpsMin row changes has its effects built while the log writes it
// (sequencer.ts appendedRows), holding the write lock until then, but not while other writers wait:
// they must still join the group commit (found by the eighth session's review: each got its own
// writev + fdatasync).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryResult } from '../../query/index.js';
import { openSql, type SqlHarness } from './helpers.js';

describe('group commit of concurrent 600-row inserts', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(async () => {
    await h.close();
  });

  it('32 concurrent 600-row inserts share fdatasyncs (group commit)', async () => {
    await h.q('CREATE TABLE g (id BIGINT PRIMARY KEY, name TEXT NOT NULL)');
    const json = (from: number): Promise<QueryResult> =>
      h.engine.insertJson(
        { schema: null, table: 'g', rows: Array.from({ length: 600 }, (_, i) => ({ id: from + i, name: `n${from + i}` })), returning: [], onConflict: null },
        { params: [], timeoutMs: 60_000, maxRows: 10_000, tenant: 'default' },
      );
    const before = h.stack.log.stats();
    await Promise.all(Array.from({ length: 32 }, (_, i) => json(i * 1000)));
    const after = h.stack.log.stats();
    const flushes = after.flushCount - before.flushCount;
    const syncs = after.fsyncCount - before.fsyncCount;
    // The records pile up behind one fdatasync and go in a few batches.
    expect(flushes).toBeLessThan(16);
    expect(syncs).toBeLessThan(16);
  });
});
