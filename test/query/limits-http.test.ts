import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { tempDir } from '../helpers/stack.js';
import { getJson, testConfig } from '../protocols/helpers.js';

const KEY = 'limits-key';

/** The SQL limits of core/settings.ts reach the engine and POST /query (bin/app.ts wires them). */
describe('SQL limits from config', () => {
  let server: ServeHandle;
  let remove: () => Promise<void>;
  const post = (body: unknown) =>
    getJson(`${server.httpUrl}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    const dir = await tempDir('svcdb-limits-');
    remove = dir.remove;
    server = await startServer(
      testConfig({
        data: dir.dir,
        'api-key': KEY,
        'log-level': 'silent',
        'max-query-size-bytes': '2048',
        'max-result-rows': '50',
        'query-timeout-ms-max': '5000',
        'sql-materialized-rows-max': '1000',
        'sql-dml-rows-max': '100',
        'sql-plan-cache-entries-max': '0',
      }),
      pino({ level: 'silent' }),
    );
    expect((await post({ sql: 'CREATE TABLE n (i INTEGER PRIMARY KEY)' })).status).toBe(200);
    // 3 statements of 100 rows each: 300 rows, each statement within sqlDmlRowsMax.
    for (let start = 0; start < 300; start += 100) {
      const values = Array.from({ length: 100 }, (_, k) => `(${start + k})`).join(', ');
      expect((await post({ sql: `INSERT INTO n VALUES ${values}` })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await server.close('test');
    await remove();
  });

  it('refuses max_rows above max_result_rows and defaults to it when smaller than 10000', async () => {
    const over = await post({ sql: 'SELECT i FROM n', max_rows: 51 });
    expect(over.status).toBe(422);
    expect(over.body.error.code).toBe('VALIDATION_ERROR');
    const dflt = await post({ sql: 'SELECT i FROM n ORDER BY i', include_metadata: true });
    expect(dflt.status).toBe(200);
    expect(dflt.body.data).toHaveLength(50);
    expect(dflt.body.metadata.truncated).toBe(true);
  });

  it('refuses a timeout_ms above queryTimeoutMsMax', async () => {
    const over = await post({ sql: 'SELECT 1', timeout_ms: 5001 });
    expect(over.status).toBe(422);
    expect((await post({ sql: 'SELECT 1', timeout_ms: 5000 })).status).toBe(200);
  });

  it('refuses SQL text over max_query_size_bytes', async () => {
    const text = `SELECT '${'x'.repeat(2100)}'`;
    const over = await post({ sql: text });
    expect(over.status).toBe(422); // the body schema counts characters
    expect(over.body.error.code).toBe('VALIDATION_ERROR');
    // Multi-byte text over the limit in bytes but not in characters reaches the engine's check.
    const wide = await post({ sql: `SELECT '${'é'.repeat(1100)}'` });
    expect(wide.status).toBe(400);
    expect(wide.body.error.code).toBe('LIMIT_EXCEEDED');
    expect(wide.body.error.details.max_query_size_bytes).toBe(2048);
  });

  it('stops a sort or aggregate that would hold more than sqlMaterializedRowsMax rows', async () => {
    const sorted = await post({ sql: 'SELECT a.i FROM n a CROSS JOIN (SELECT i FROM n LIMIT 4) b ORDER BY a.i DESC', max_rows: 10 });
    expect(sorted.status).toBe(400);
    expect(sorted.body.error.code).toBe('LIMIT_EXCEEDED');
    expect(sorted.body.error.details.rows_max).toBe(1000);
    // ORDER BY ... LIMIT keeps limit + offset rows; a limit above what a sort may hold is a full sort.
    const topN = await post({ sql: 'SELECT a.i FROM n a CROSS JOIN (SELECT i FROM n LIMIT 4) b ORDER BY a.i DESC LIMIT 100000', max_rows: 10 });
    expect(topN.body.error.code).toBe('LIMIT_EXCEEDED');
    const small = await post({ sql: 'SELECT a.i FROM n a CROSS JOIN (SELECT i FROM n LIMIT 4) b ORDER BY a.i DESC LIMIT 3' });
    expect(small.body.data).toEqual([{ i: 299 }, { i: 299 }, { i: 299 }]);
    const grouped = await post({ sql: 'SELECT i, count(*) FROM n GROUP BY i', max_rows: 10 });
    expect(grouped.status).toBe(200);
  });

  it('stops a runaway WITH RECURSIVE at sqlMaterializedRowsMax rows; LIMIT or a cycle under UNION ends it first', async () => {
    const runaway = await post({ sql: 'WITH RECURSIVE t(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM t) SELECT count(*) FROM t' });
    expect(runaway.status).toBe(400);
    expect(runaway.body.error.code).toBe('LIMIT_EXCEEDED');
    expect(runaway.body.error.details.rows_max).toBe(1000);
    expect(runaway.body.error.message).toContain('recursive query "t"');
    const limited = await post({ sql: 'WITH RECURSIVE t(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM t) SELECT k FROM t LIMIT 3' });
    expect(limited.body.data).toEqual([{ k: 1 }, { k: 2 }, { k: 3 }]);
    const cycle = await post({ sql: 'WITH RECURSIVE t(k) AS (SELECT 1 UNION SELECT (k + 1) % 5 FROM t) SELECT count(*) AS c FROM t' });
    expect(cycle.body.data).toEqual([{ c: 5 }]);
  });

  it('refuses a DML statement changing more than sqlDmlRowsMax rows, and writes nothing of it', async () => {
    const values = Array.from({ length: 101 }, (_, k) => `(${1000 + k})`).join(', ');
    const over = await post({ sql: `INSERT INTO n VALUES ${values}` });
    expect(over.body.error.code).toBe('LIMIT_EXCEEDED');
    const update = await post({ sql: 'UPDATE n SET i = i + 10000' });
    expect(update.body.error.code).toBe('LIMIT_EXCEEDED');
    const count = await post({ sql: 'SELECT count(*) AS c, max(i) AS m FROM n' });
    expect(count.body.data).toEqual([{ c: 300, m: 299 }]);
  });
});
