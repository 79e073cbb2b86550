import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteOptions, TxnManager } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

const LIMITS = { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 1000 };

/**
 * The engine over a transaction manager that knows no engine (query/txn/scope.ts): statements name
 * an open transaction in ExecuteOptions.transaction; the manager returns typed records.
 */
describe('statements in a transaction scope', () => {
  let h: SqlHarness;
  let manager: TxnManager;
  const base = { timeoutMs: 10_000, maxRows: 1000, tenant: 'default' };
  const inTxn = (id: string, sql: string, extra: Partial<ExecuteOptions> = {}) => h.engine.execute(sql, { ...base, ...extra, transaction: { id } });

  beforeAll(async () => {
    h = await openSql({ transactions: LIMITS });
    manager = h.transactions!;
    await h.q('CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL)');
    await h.q('INSERT INTO acct VALUES (1, 100), (2, 50)');
  });
  afterAll(async () => h.close());

  it('begins, runs SQL and JSON inserts in the transaction, and commits them as one record', async () => {
    const begun = await manager.begin({ tenant: 'default', isolation: 'repeatable_read', readOnly: false });
    expect(begun).toMatchObject({ isolation: 'repeatable_read', readOnly: false, status: 'open', endedAtMs: null, failure: null });
    expect(begun.expiresAtMs - begun.startedAtMs).toBe(LIMITS.transactionTimeoutMsDefault);
    const id = begun.transactionId;
    await inTxn(id, 'UPDATE acct SET balance = balance - 30 WHERE id = 1');
    const inserted = await h.engine.insertJson(
      { schema: null, table: 'acct', rows: [{ id: 3, balance: 45 }], returning: ['id'], onConflict: null },
      { ...base, transaction: { id } },
    );
    expect(inserted.rows).toEqual([{ id: 3 }]);
    // Its own changes are visible inside, not outside, before commit.
    expect((await inTxn(id, 'SELECT sum(balance) AS s FROM acct')).rows).toEqual([{ s: 165 }]);
    expect(await h.rows('SELECT sum(balance) AS s FROM acct')).toEqual([{ s: 150 }]);
    const committed = await manager.commit(id, { tenant: 'default' });
    expect(committed).toMatchObject({ transactionId: id, status: 'committed', lsn: expect.any(Number) });
    expect(await h.rows('SELECT sum(balance) AS s FROM acct')).toEqual([{ s: 165 }]);
    expect(manager.get(id, { tenant: 'default' })).toMatchObject({ status: 'committed', endedAtMs: committed.committedAtMs });
  });

  it('a failing statement aborts the transaction, with its failure typed; read-only and DDL are refused', async () => {
    const ro = await manager.begin({ tenant: 'default', isolation: 'read_committed', readOnly: true });
    expect(await caught(inTxn(ro.transactionId, 'DELETE FROM acct'))).toMatchObject({ code: 'INVALID_STATE', details: { read_only: true } });
    expect(manager.get(ro.transactionId, { tenant: 'default' })).toMatchObject({ status: 'aborted', failure: { code: 'INVALID_STATE' } });
    expect(await manager.rollback(ro.transactionId, { tenant: 'default' })).toMatchObject({ status: 'rolled_back', rolledBackAtMs: expect.any(Number) });
    const rw = await manager.begin({ tenant: 'default', isolation: 'read_committed', readOnly: false });
    const ddl = await caught(h.engine.executeDdlBatch(['CREATE TABLE t2 (x INT)'], { ...base, transaction: { id: rw.transactionId } }));
    expect(ddl).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'ddl_in_transaction' } });
    expect(ddl.message).not.toMatch(/POST|\/transactions|\/query/);
    const control = await caught(inTxn(rw.transactionId, 'COMMIT'));
    expect(control).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'transaction_control' } });
    expect(control.message).not.toMatch(/POST|\/transactions/);
    await manager.rollback(rw.transactionId, { tenant: 'default' });
  });

  it('a statement refused before it starts (text past queryTextBytesMax) aborts the transaction and leaves it usable for rollback', async () => {
    const txn = await manager.begin({ tenant: 'default', isolation: 'read_committed', readOnly: false });
    const huge = `SELECT 1 -- ${'x'.repeat(1_100_000)}`;
    expect((await caught(inTxn(txn.transactionId, huge))).code).toBe('LIMIT_EXCEEDED');
    expect(manager.get(txn.transactionId, { tenant: 'default' })).toMatchObject({ status: 'aborted', failure: { code: 'LIMIT_EXCEEDED' } });
    expect((await manager.rollback(txn.transactionId, { tenant: 'default' })).status).toBe('rolled_back');
  });

  it('a multi-row insert committed after a transaction read the rows it adds is a conflict; with no transaction open its keys are not kept', async () => {
    await h.q('CREATE TABLE many (id INT PRIMARY KEY, v INT NOT NULL)');
    const values = (from: number) => Array.from({ length: 200 }, (_, i) => `(${from + i}, ${i})`).join(', ');
    // No transaction open: the sequencer's observer is told of the record but nothing lists its keys.
    await h.q(`INSERT INTO many VALUES ${values(1)}`);
    expect(manager.stats()).toMatchObject({ open: 0, recentKeys: 0 });
    const txn = await manager.begin({ tenant: 'default', isolation: 'serializable', readOnly: false });
    expect((await inTxn(txn.transactionId, 'SELECT count(*) AS n FROM many WHERE id > 300')).rows).toEqual([{ n: 0 }]);
    await inTxn(txn.transactionId, 'INSERT INTO acct VALUES (40, 1)');
    // Outside: 200 rows in one record, one of them inside the range the transaction read.
    await h.q(`INSERT INTO many VALUES ${values(301)}`);
    expect(manager.stats().recentKeys).toBeGreaterThanOrEqual(200);
    expect(await caught(manager.commit(txn.transactionId, { tenant: 'default' }))).toMatchObject({ code: 'TRANSACTION_CONFLICT' });
    expect(await h.rows('SELECT count(*) AS n FROM acct WHERE id = 40')).toEqual([{ n: 0 }]);
  });

  it('another tenant, or another credential, is told the transaction does not exist', async () => {
    const owned = await manager.begin({ tenant: 'default', owner: 'key-a', isolation: 'read_committed', readOnly: false });
    expect((await caught(h.engine.execute('SELECT 1', { ...base, tenant: 'other', transaction: { id: owned.transactionId } }))).code).toBe('NOT_FOUND');
    expect((await caught(h.engine.execute('SELECT 1', { ...base, transaction: { id: owned.transactionId, credential: 'key-b' } }))).code).toBe('NOT_FOUND');
    expect((await h.engine.execute('SELECT 1 AS one', { ...base, transaction: { id: owned.transactionId, credential: 'key-b', admin: true } })).rows).toEqual([
      { one: 1 },
    ]);
    await manager.rollback(owned.transactionId, { tenant: 'default' });
  });
});
