import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueNames } from '../../query/bind/names.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { PgliteEngine, SvcdbHttpEngine, type SqlEngine } from './runner/index.js';

/**
 * Result column names of expressions without an alias: svcdb must name them as PostgreSQL's
 * FigureColname does (clients and the fuzzer read columns by name). Each statement runs on a
 * real svcdb server and on PGlite; the names must be the same, after svcdb's renaming of
 * duplicates (x, x_2: result rows are JSON objects).
 */
const SETUP = ['CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, s TEXT, ts TIMESTAMPTZ)', "INSERT INTO t VALUES (1, 2, 'x', '2024-01-01 00:00:00+00')"];

const STATEMENTS = [
  'SELECT id, t.a, s FROM t',
  "SELECT a + 1, -a, NOT true, a IS NULL, a BETWEEN 1 AND 2, a IN (1, 2), s LIKE 'x%', s SIMILAR TO 'x' FROM t",
  'SELECT upper(s), lower(s), count(*), sum(a), max(a) OVER () FROM t GROUP BY s, a',
  "SELECT a::TEXT, '1'::INTEGER, 1::NUMERIC(5, 2), CAST(a AS BIGINT), '{}'::JSONB, now()::DATE FROM t",
  "SELECT TIMESTAMPTZ '2024-01-01 00:00:00+00', INTERVAL '1' DAY, DATE '2024-01-01', NUMERIC '1.5', BOOLEAN 'true'",
  'SELECT CASE WHEN a > 1 THEN 1 END, CASE WHEN a > 1 THEN 1 ELSE a END, (CASE WHEN a > 1 THEN 1 END)::TEXT FROM t',
  'SELECT COALESCE(a, 0), NULLIF(a, 1), GREATEST(a, 1), LEAST(a, 1) FROM t',
  'SELECT ARRAY[1, 2], (ARRAY[1, 2])[1], ARRAY(SELECT 1), EXISTS (SELECT 1), (SELECT a FROM t), (SELECT a AS b FROM t), (SELECT 1)',
  'SELECT CURRENT_DATE, CURRENT_TIMESTAMP, LOCALTIMESTAMP, current_schema',
  "SELECT EXTRACT(YEAR FROM ts), date_part('month', ts), ts AT TIME ZONE 'UTC', POSITION('x' IN s), SUBSTRING(s FROM 1 FOR 1), TRIM(s) FROM t",
  'SELECT s COLLATE "C", a IS DISTINCT FROM 1, 1 = ANY (ARRAY[1]), (a), ((a + 1)), \'lit\', 1, NULL, true FROM t',
  'SELECT * FROM (SELECT a, a FROM t) AS q(x, y)',
];

describe('output column names follow PostgreSQL (FigureColname)', () => {
  let server: TestServer;
  let svcdb: SqlEngine;
  let pg: PgliteEngine;
  beforeAll(async () => {
    server = await startTestServer();
    svcdb = new SvcdbHttpEngine(server.baseUrl, server.apiKey);
    pg = await PgliteEngine.create();
    for (const sql of SETUP) {
      for (const engine of [svcdb, pg]) {
        const r = await engine.execute(sql);
        if (r.kind === 'error') throw new Error(`${engine.name}: ${sql}: ${r.message}`);
      }
    }
  }, 60_000);
  afterAll(async () => {
    await svcdb?.close();
    await pg?.close();
    await server?.close();
  });

  it.each(STATEMENTS)('%s', async (sql) => {
    const ours = await svcdb.execute(sql);
    const theirs = await pg.execute(sql);
    if (theirs.kind === 'error') throw new Error(`PGlite: ${theirs.message}`);
    if (ours.kind === 'error') throw new Error(`svcdb: ${ours.message}`);
    expect(ours.columns.map((c) => c.name)).toEqual(uniqueNames(theirs.columns.map((c) => c.name)));
  });
});
