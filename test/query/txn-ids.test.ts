import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeLogRecord } from '../../core/log-records.js';
import { lsn } from '../../core/units.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * Each write statement's log record is named by its own random UUID (query/ddl/common.ts txnRecord,
 * core/ids.ts newUuid): CDC events carry it as transaction_id, so it keeps crypto.randomUUID's text.
 */
describe('the txnId of a statement record', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT)');
  });
  afterAll(() => h?.close());

  it('is a version 4 UUID, a different one for every INSERT (SQL and JSON rows) and DDL statement', async () => {
    for (let i = 1; i <= 200; i++) {
      if (i % 2 === 0) await h.q('INSERT INTO t VALUES ($1, $2)', [i, `n${i}`]);
      else
        await h.engine.insertJson(
          { schema: null, table: 't', rows: [{ id: i, name: `n${i}` }], returning: [], onConflict: null },
          { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' },
        );
    }
    const ids: string[] = [];
    for await (const batch of h.stack.log.read(lsn(1))) for (const entry of batch) ids.push(decodeLogRecord(entry.payload).txnId);
    expect(ids.length).toBe(201);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
