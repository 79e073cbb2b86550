import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from '../query/helpers.js';
import { rowChange, txn } from '../helpers/stack.js';

/**
 * A builder whose outcome is there at once (submitDml's for a single-row insert of given values)
 * is not awaited by the sequencer: with the write lock free, the record is appended in the same
 * turn as submit() was called (no turn of the microtask queue per write), and it is durable,
 * answered and applied as any other. A builder's throw is still the submit's rejection.
 */
describe('Sequencer.submit with a synchronous builder', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT, score INTEGER)');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('appends in the same turn, then answers once durable; the row is read back', async () => {
    const { projections, log } = h.stack;
    const def = projections.catalog.tableByName('default', 'public', 'items')!.def;
    const record = txn([rowChange(def, 'insert', null, { id: 7n, name: 'seven', score: 7 })]);
    const head = log.headLsn;
    const submitted = projections.sequencer.submit(() => ({ record, result: 'built' }));
    expect(log.headLsn).toBe(head + 1);
    expect(await submitted).toEqual({ lsn: head + 1, result: 'built' });
    expect(await h.rows('SELECT * FROM items WHERE id = 7')).toEqual([{ id: 7, name: 'seven', score: 7 }]);
  });

  it('an async builder still works; a synchronous throw rejects the submit and frees the lock', async () => {
    const { projections } = h.stack;
    const def = projections.catalog.tableByName('default', 'public', 'items')!.def;
    await expect(
      projections.sequencer.submit(() => {
        throw new Error('no record');
      }),
    ).rejects.toThrow('no record');
    expect(await projections.sequencer.submit(() => null)).toEqual({ lsn: null, result: null });
    const record = txn([rowChange(def, 'insert', null, { id: 8n, name: 'eight', score: 8 })]);
    expect((await projections.sequencer.submit(async () => ({ record, result: 8 }))).result).toBe(8);
    expect(await h.rows('SELECT id FROM items WHERE id >= 7 ORDER BY id')).toEqual([{ id: 7 }, { id: 8 }]);
  });
});
