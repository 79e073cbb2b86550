import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TENANT } from '../../core/catalog.js';
import type { JsonRow } from '../../query/index.js';
import { api, bearer, eventually, newKey, query } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * POST /query answers a SELECT by whole primary key with one synchronous store read
 * (query/fast-point.ts, SqlEngine.pointSelect). Every answer must be the general path's, byte for
 * byte: the same statement with `LIMIT 1000` appended means the same and never takes the fast
 * path (its plan has a limit on top), so it is the oracle. Each case also checks which path ran.
 */
describe('POST /query point SELECT: the fast path answers as the general path', () => {
  let server: TestServer;
  let admin: Record<string, string>;
  const ORACLE = ' LIMIT 1000';

  /** POST /query's status and body text, optionally with metadata. */
  const post = async (headers: Record<string, string>, sql: string, params: unknown[], metadata = false): Promise<{ status: number; text: string }> => {
    const response = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ sql, params, ...(metadata ? { include_metadata: true } : {}) }),
    });
    return { status: response.status, text: await response.text() };
  };
  /** Whether the engine answers `sql` on the fast path now (in the default tenant). */
  const takesFastPath = (sql: string, params: unknown[]): boolean => {
    try {
      return server.sql.pointSelect(sql, { tenant: DEFAULT_TENANT, params, timeoutMs: 10_000, maxRows: 10 }) !== undefined;
    } catch {
      return true; // it answered: with the general path's error (compared below)
    }
  };
  /** The statement and its oracle give the same bytes (and the same metadata but timings); returns the rows. */
  const same = async (sql: string, params: unknown[], options: { fast?: boolean | null; headers?: Record<string, string> } = {}): Promise<unknown[]> => {
    const headers = options.headers ?? admin;
    const general = await post(headers, sql + ORACLE, params);
    const first = await post(headers, sql, params); // the first run plans and caches the statement
    const fast = await post(headers, sql, params);
    if (options.headers === undefined) {
      // null: either path (a key type whose plan keeps a filter); the answer is compared all the same.
      if (options.fast !== null) expect(takesFastPath(sql, params), `fast path for ${sql}`).toBe(options.fast ?? true);
      expect(takesFastPath(sql + ORACLE, params), `oracle ${sql}`).toBe(false);
    }
    expect(first.text, sql).toBe(general.text);
    expect(fast.text, sql).toBe(general.text);
    expect(fast.status, sql).toBe(general.status);
    if (general.status === 200) {
      const withMeta = JSON.parse((await post(headers, sql, params, true)).text);
      const oracleMeta = JSON.parse((await post(headers, sql + ORACLE, params, true)).text);
      for (const key of ['columns', 'row_count', 'command', 'affected_rows', 'truncated'])
        expect(withMeta.metadata[key], key).toEqual(oracleMeta.metadata[key]);
    }
    return general.status === 200 ? JSON.parse(general.text).data : [];
  };
  const exec = async (sql: string, headers = admin): Promise<void> => {
    const result = await query(server.baseUrl, headers, sql);
    expect(result.status, JSON.stringify(result.body)).toBe(200);
  };

  beforeAll(async () => {
    server = await startTestServer();
    admin = bearer(server.apiKey);
    await exec(`CREATE TABLE every (id BIGINT PRIMARY KEY, b BOOLEAN, i2 SMALLINT, i4 INTEGER, n NUMERIC(12,3), f4 REAL, f8 DOUBLE PRECISION,
      t TEXT, vc VARCHAR(8), c CHAR(4), u UUID, j JSONB, ts TIMESTAMP, tz TIMESTAMPTZ, d DATE, v VECTOR(3))`);
    await exec(`INSERT INTO every VALUES
      (1, true, -7, 2147483647, 12345.678, 1.1, 0.1, 'text "quoted" é ✓', 'short', 'ab', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
       '{"z": 1.0, "a": [1, 2.50, {"k": null}], "big": 12345678901234567890123}', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15+02', '2024-02-29',
       '[1.5, -2, 3.25]'),
      (2, NULL, NULL, NULL, NULL, 'NaN', '-Infinity', NULL, NULL, NULL, NULL, 'null', NULL, NULL, NULL, NULL),
      (-3, false, 0, 0, -0.5, -0.0, 1e300, '', '', '', '00000000-0000-0000-0000-000000000000', '[]', '1970-01-01', '1970-01-01', '1970-01-01', '[0,0,0]')`);
  });
  afterAll(() => server?.close());

  it('every column type and NULLs, SELECT * and column lists, parameters and literals', async () => {
    for (const id of [1, 2, -3, '1', '-3']) expect(await same('SELECT * FROM every WHERE id = $1', [id])).toHaveLength(1);
    expect(await same('SELECT * FROM every WHERE id = $1', [99])).toEqual([]);
    expect(await same('SELECT * FROM every WHERE id = $1', [null])).toEqual([]);
    await same('SELECT tz, id, j, n, tz FROM every WHERE id = $1', [1]);
    await same('SELECT id AS x, id, t AS id, v FROM every WHERE id = $1', [1]);
    await same('SELECT j, f4, f8 FROM every WHERE $1 = id', [2]);
    await same('SELECT * FROM every WHERE id = 1', []);
    await same("SELECT * FROM every WHERE id = '-3'", []);
    await same('SELECT * FROM every WHERE id = $1::bigint', ['1']);
    await same('SELECT * FROM every WHERE id = $1::int', [1]);
    await same('SELECT * FROM every AS e WHERE e.id = $1', [1]);
    await same('select * from every where id = $1', [1]);
  });

  it('remembers row keys by parameter: each value reads what its own conversion reads, through writes and past the bound', async () => {
    await exec('CREATE TABLE pk_int (id BIGINT PRIMARY KEY, a TEXT)');
    await exec('CREATE TABLE pk_text (k TEXT PRIMARY KEY, a TEXT)');
    await exec('CREATE TABLE pk_float (f DOUBLE PRECISION PRIMARY KEY, a TEXT)');
    await exec("INSERT INTO pk_int VALUES (0, 'zero'), (1, 'one'), (10, 'ten')");
    await exec("INSERT INTO pk_text VALUES ('a', 'lower'), ('A', 'upper'), ('1', 'one')");
    await exec("INSERT INTO pk_float VALUES (0, 'zero'), (1.5, 'x')");
    const options = (params: unknown[]) => ({ tenant: DEFAULT_TENANT, params, timeoutMs: 10_000, maxRows: 10 });
    const toText = (row: JsonRow): string => JSON.stringify(row);
    const answer = async (run: () => Promise<{ rows: unknown[]; rowsText?: string } | undefined>): Promise<string> => {
      try {
        const result = await run();
        return result === undefined ? 'not answered' : (result.rowsText ?? JSON.stringify(result.rows));
      } catch (error) {
        return `error ${(error as { code?: string }).code}: ${(error as Error).message}`;
      }
    };
    const cases: [string, unknown[]][] = [
      ['SELECT * FROM pk_int WHERE id = $1', [0, 1, '1', '01', ' 1', 10, '10', 2, '02', -0, 1.5, '1.5', 'x', 99999999999999, '']],
      ['SELECT * FROM pk_text WHERE k = $1', ['a', 'A', '1', 1, ' a', 'b', '']],
      ['SELECT * FROM pk_float WHERE f = $1', [0, -0, '0', '-0', 1.5, '1.5', 2]],
    ];
    const check = async (): Promise<void> => {
      for (const [sql, values] of cases) {
        for (const value of values) {
          const oracle = await answer(() => server.sql.execute(sql + ORACLE, options([value])));
          await answer(() => server.sql.execute(sql, options([value]))); // plans the statement
          for (const round of [1, 2]) {
            const direct = await answer(async () => server.sql.pointSelect(sql, options([value]), toText));
            expect(direct, `${sql} ${JSON.stringify(value)} ${Object.is(value, -0) ? '(-0)' : ''} round ${round}`).toBe(oracle);
          }
        }
      }
    };
    await check();
    await exec("UPDATE pk_int SET a = 'uno' WHERE id = 1");
    await exec("INSERT INTO pk_int VALUES (2, 'two')");
    await exec("DELETE FROM pk_text WHERE k = 'A'");
    await exec("UPDATE pk_float SET a = 'cero' WHERE f = 0");
    await check();
    // More values than the remembered keys' bound (131,072): they start over, and read the same.
    for (let id = 0; id < 140_000; id++) server.sql.pointSelect('SELECT * FROM pk_int WHERE id = $1', options([id]), toText);
    await check();
  }, 120_000);

  it('a wrong or missing parameter fails with the general path error', async () => {
    for (const params of [['abc'], [1.5], [{ x: 1 }], [[1]], ['99999999999999999999'], [true]]) {
      const fast = await post(admin, 'SELECT * FROM every WHERE id = $1', params);
      const general = await post(admin, 'SELECT * FROM every WHERE id = $1' + ORACLE, params);
      expect(fast.status, JSON.stringify(params)).toBe(general.status);
      expect(JSON.parse(fast.text).error?.code ?? null).toBe(JSON.parse(general.text).error?.code ?? null);
      expect(JSON.parse(fast.text).error?.message ?? null).toBe(JSON.parse(general.text).error?.message ?? null);
    }
    const missing = await post(admin, 'SELECT * FROM every WHERE id = $1', []);
    const oracle = await post(admin, 'SELECT * FROM every WHERE id = $1' + ORACLE, []);
    expect(missing.status).toBe(oracle.status);
    expect(JSON.parse(missing.text).error.message).toBe(JSON.parse(oracle.text).error.message);
  });

  it('key types: composite keys in any order, text, uuid, numeric, float, char, timestamptz, date', async () => {
    await exec('CREATE TABLE pair (a INTEGER, b TEXT, v INTEGER, PRIMARY KEY (a, b))');
    await exec("INSERT INTO pair VALUES (1, 'x,y', 5), (1, '', 6), (2, 'x,y', 7)");
    await same('SELECT * FROM pair WHERE a = $1 AND b = $2', [1, 'x,y']);
    await same('SELECT v FROM pair WHERE b = $2 AND a = $1', [1, '']);
    await same('SELECT * FROM pair WHERE a = $1 AND b = $2', [3, 'x,y']);
    // Only part of the key: a range, not a point.
    expect(await same('SELECT * FROM pair WHERE a = $1', [1], { fast: false })).toHaveLength(2);
    await exec('CREATE TABLE k_uuid (k UUID PRIMARY KEY, v INTEGER)');
    await exec("INSERT INTO k_uuid VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 1)");
    await same('SELECT * FROM k_uuid WHERE k = $1', ['A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11']);
    await exec('CREATE TABLE k_num (k NUMERIC PRIMARY KEY, v INTEGER)');
    await exec('INSERT INTO k_num VALUES (1.50, 1)');
    for (const k of ['1.5', '1.500', 1.5]) await same('SELECT * FROM k_num WHERE k = $1', [k], { fast: null });
    await exec('CREATE TABLE k_float (k DOUBLE PRECISION PRIMARY KEY, v INTEGER)');
    await exec("INSERT INTO k_float VALUES (0, 1), ('NaN', 2)");
    for (const k of [0, '-0', 'NaN']) await same('SELECT * FROM k_float WHERE k = $1', [k], { fast: null });
    await exec('CREATE TABLE k_char (k CHAR(3) PRIMARY KEY, v INTEGER)');
    await exec("INSERT INTO k_char VALUES ('ab', 1)");
    for (const k of ['ab', 'ab ', 'ab  ']) await same('SELECT * FROM k_char WHERE k = $1', [k], { fast: null });
    await exec('CREATE TABLE k_time (k TIMESTAMPTZ PRIMARY KEY, d DATE)');
    await exec("INSERT INTO k_time VALUES ('2024-01-02 03:04:05+00', '2024-01-02')");
    for (const k of ['2024-01-02 03:04:05+00', '2024-01-02T04:04:05+01:00']) await same('SELECT * FROM k_time WHERE k = $1', [k], { fast: null });
  });

  it('what the fast path leaves alone answers as before: views with a filter, extra conditions, ORDER BY, aggregates', async () => {
    await exec('CREATE VIEW every_plain AS SELECT id, t, j FROM every');
    await exec('CREATE VIEW every_true AS SELECT * FROM every WHERE b');
    await same('SELECT * FROM every_plain WHERE id = $1', [1], { fast: null });
    await same('SELECT * FROM every_true WHERE id = $1', [1], { fast: false });
    await same('SELECT * FROM every_true WHERE id = $1', [-3], { fast: false });
    await same('SELECT * FROM every WHERE id = $1 AND b', [-3], { fast: false });
    await same('SELECT id, length(t) FROM every WHERE id = $1', [1], { fast: false });
    await same('SELECT count(*) FROM every WHERE id = $1', [1], { fast: false });
    await same('SELECT * FROM every WHERE id = $1 OR id = 2', [1], { fast: false });
  });

  it('reads its own writes: each row inserted, changed or deleted through SQL is seen by the very next point SELECT', async () => {
    await exec('CREATE TABLE ryw (id INTEGER PRIMARY KEY, n INTEGER)');
    const select = 'SELECT * FROM ryw WHERE id = $1';
    await post(admin, select, [0]); // planned and cached before the writes
    expect(takesFastPath(select, [0])).toBe(true);
    for (let i = 1; i <= 30; i++) {
      expect((await post(admin, 'INSERT INTO ryw VALUES ($1, $2)', [i, i])).status).toBe(200);
      expect(JSON.parse((await post(admin, select, [i])).text).data).toEqual([{ id: i, n: i }]);
      expect((await post(admin, 'UPDATE ryw SET n = n + 100 WHERE id = $1', [i])).status).toBe(200);
      expect(JSON.parse((await post(admin, select, [i])).text).data).toEqual([{ id: i, n: i + 100 }]);
    }
    const concurrent = await Promise.all(
      Array.from({ length: 20 }, async (_v, k) => {
        await post(admin, 'INSERT INTO ryw VALUES ($1, $2)', [100 + k, k]);
        return JSON.parse((await post(admin, select, [100 + k])).text).data;
      }),
    );
    expect(concurrent).toEqual(Array.from({ length: 20 }, (_v, k) => [{ id: 100 + k, n: k }]));
    expect((await post(admin, 'DELETE FROM ryw WHERE id = $1', [7])).status).toBe(200);
    expect(JSON.parse((await post(admin, select, [7])).text).data).toEqual([]);
  });

  it('follows DDL: a column added, the table dropped and made again', async () => {
    await exec('CREATE TABLE altered (id INTEGER PRIMARY KEY, a TEXT)');
    await exec("INSERT INTO altered VALUES (1, 'one')");
    expect(await same('SELECT * FROM altered WHERE id = $1', [1])).toEqual([{ id: 1, a: 'one' }]);
    await exec('ALTER TABLE altered ADD COLUMN n INTEGER DEFAULT 42');
    expect(await same('SELECT * FROM altered WHERE id = $1', [1])).toEqual([{ id: 1, a: 'one', n: 42 }]);
    await exec('DROP TABLE altered');
    const gone = await post(admin, 'SELECT * FROM altered WHERE id = $1', [1]);
    const goneOracle = await post(admin, 'SELECT * FROM altered WHERE id = $1' + ORACLE, [1]);
    expect(gone.status).not.toBe(200);
    expect([gone.status, JSON.parse(gone.text).error.message]).toEqual([goneOracle.status, JSON.parse(goneOracle.text).error.message]);
    await exec('CREATE TABLE altered (id TEXT PRIMARY KEY, other INTEGER)');
    await exec("INSERT INTO altered VALUES ('1', 5)");
    expect(await same('SELECT * FROM altered WHERE id = $1', ['1'])).toEqual([{ id: '1', other: 5 }]);
  });

  it('inside a transaction: its snapshot and its own uncommitted writes, as the general path', async () => {
    await exec('CREATE TABLE tx (id INTEGER PRIMARY KEY, n INTEGER)');
    await exec('INSERT INTO tx VALUES (1, 1)');
    const select = 'SELECT * FROM tx WHERE id = $1';
    await post(admin, select, [1]);
    const begun = await api(server.baseUrl, '/transactions', { headers: admin, body: { isolation_level: 'repeatable_read' } });
    expect(begun.status).toBe(201);
    const id = begun.body.transaction_id as string;
    const inTxn = async (sql: string, params: unknown[]) => api(server.baseUrl, `/transactions/${id}/query`, { headers: admin, body: { sql, params } });
    expect((await inTxn(select, [1])).body.data).toEqual([{ id: 1, n: 1 }]);
    await exec('UPDATE tx SET n = 2 WHERE id = 1'); // committed outside: the transaction's snapshot does not see it
    expect(JSON.parse((await post(admin, select, [1])).text).data).toEqual([{ id: 1, n: 2 }]);
    expect((await inTxn(select, [1])).body.data).toEqual((await inTxn(select + ORACLE, [1])).body.data);
    expect((await inTxn(select, [1])).body.data).toEqual([{ id: 1, n: 1 }]);
    expect((await inTxn('INSERT INTO tx VALUES ($1, $2)', [5, 50])).status).toBe(200);
    expect((await inTxn(select, [5])).body.data).toEqual([{ id: 5, n: 50 }]);
    expect(JSON.parse((await post(admin, select, [5])).text).data).toEqual([]); // not committed: not seen outside
    expect((await api(server.baseUrl, `/transactions/${id}/commit`, { method: 'POST', headers: admin })).status).toBe(200);
    expect(JSON.parse((await post(admin, select, [5])).text).data).toEqual([{ id: 5, n: 50 }]);
  });

  it('each point SELECT counts in the query metrics as before, a failing one as an error', async () => {
    const select = 'SELECT * FROM every WHERE id = $1';
    await post(admin, select, [1]);
    expect(takesFastPath(select, [1])).toBe(true);
    const sample = async (series: string): Promise<number> => {
      const text = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: admin })).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? 0 : Number(line.slice(series.length + 1));
    };
    const success = 'svc_queries_total{status="success",database="default"}';
    const error = 'svc_queries_total{status="error",database="default"}';
    const observed = 'svc_query_duration_seconds_count{database="default"}';
    const before = [await sample(success), await sample(error), await sample(observed)];
    for (const id of [1, 2, 99]) expect((await post(admin, select, [id])).status).toBe(200);
    expect((await post(admin, select, ['abc'])).status).not.toBe(200);
    expect([await sample(success), await sample(error), await sample(observed)]).toEqual([before[0]! + 3, before[1]! + 1, before[2]! + 4]);
  });

  it('tenants: the same text reads each tenant its own table; roles as before', async () => {
    const acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    const globex = (await newKey(server.dataDir, { role: 'read_only', tenant: 'globex' })).key;
    await eventually(async () => (await api(server.baseUrl, '/tables', { headers: bearer(globex) })).status === 200);
    await exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)', bearer(acme));
    await exec("INSERT INTO notes VALUES (1, 'acme')", bearer(acme));
    const globexAdmin = { ...admin, 'x-tenant-id': 'globex' };
    await exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, extra INTEGER)', globexAdmin);
    await exec("INSERT INTO notes VALUES (1, 'globex', 9)", globexAdmin);
    const select = 'SELECT * FROM notes WHERE id = $1';
    for (let round = 0; round < 2; round++) {
      expect(await same(select, [1], { headers: bearer(acme) })).toEqual([{ id: 1, body: 'acme' }]);
      expect(await same(select, [1], { headers: bearer(globex) })).toEqual([{ id: 1, body: 'globex', extra: 9 }]);
      const none = await post(admin, select, [1]);
      expect(none.status).toBe((await post(admin, select + ORACLE, [1])).status);
      expect(none.status).not.toBe(200);
    }
    const crossing = await post({ ...bearer(globex), 'x-tenant-id': 'acme' }, select, [1]);
    expect(crossing.status).toBe(403);
  });
});
