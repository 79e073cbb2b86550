/**
 * Materialized views end to end (issue 15): their rows come from the log records that CREATE and
 * REFRESH wrote, so a restart and `svcdb replay` give exactly the stored rows (not the query run
 * again); the populated flag survives too; REST lists them with their kind and row counts, and
 * GraphQL reads them. SQL semantics are in test/sql/matviews.slt. CREATE TABLE ... AS writes its rows
 * the same way and is checked beside them (SQL semantics in test/sql/create-table-as.slt).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, apiSql } from '../helpers/api-calls.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

let dataDir: string;
let server: TestServer | null = null;

const call = (method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> => apiCall(server!, method, route, body);
const sql = (text: string, params: unknown[] = []): Promise<any[]> => apiSql(server!, text, params);

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-matviews-'));
  server = await startTestServer({ dataDir });
  await sql('CREATE TABLE readings (id INT PRIMARY KEY, sensor TEXT NOT NULL, value NUMERIC)');
  await sql("INSERT INTO readings VALUES (1, 'a', 1.5), (2, 'a', 2.5), (3, 'b', NULL)");
  // random() makes the rows differ from any later run of the query: only the log can give them back.
  await sql('CREATE MATERIALIZED VIEW snap AS SELECT id, sensor, value, random() AS r FROM readings');
  await sql('CREATE MATERIALIZED VIEW per_sensor AS SELECT sensor, sum(value) AS total FROM readings GROUP BY sensor WITH NO DATA');
  await sql("INSERT INTO readings VALUES (4, 'c', 10)");
  await sql('REFRESH MATERIALIZED VIEW per_sensor');
  await sql("INSERT INTO readings VALUES (5, 'c', 20)");
  // CREATE TABLE ... AS stores its rows the same way (one record), then takes writes like any table.
  await sql('CREATE TABLE copied AS SELECT id, random() AS r FROM readings WHERE id <= 2');
  await sql('INSERT INTO copied VALUES (10, 0.5)');
});

afterAll(async () => {
  await server?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const readAll = async () => ({
  snap: await sql('SELECT id, sensor, value, r FROM snap ORDER BY id'),
  perSensor: await sql('SELECT sensor, total FROM per_sensor ORDER BY sensor'),
  copied: await sql('SELECT id, r FROM copied ORDER BY id'),
});

describe('materialized views over REST, GraphQL, restart and replay', () => {
  it('hold the rows of their creation or last refresh', async () => {
    const { snap, perSensor } = await readAll();
    expect(snap.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(perSensor).toEqual([
      { sensor: 'a', total: '4.0' },
      { sensor: 'b', total: null },
      { sensor: 'c', total: '10' },
    ]);
  });

  it('REST lists them with their kind and stored row count, and refuses their rows to writes', async () => {
    const list = await call('GET', '/tables?include_views=true');
    expect(list.status, JSON.stringify(list.body)).toBe(200);
    const tables = list.body.tables ?? list.body.data;
    expect(tables.find((t: { name: string }) => t.name === 'snap')).toMatchObject({ type: 'materialized_view', row_count: 3 });
    const detail = await call('GET', '/tables/snap');
    expect(detail.body).toMatchObject({ name: 'snap', type: 'materialized_view' });
    const insert = await call('POST', '/tables/snap/rows', { row: { id: 9, sensor: 'x' } });
    expect(insert.status).toBe(400);
    expect(insert.body.error.message).toBe('cannot change materialized view "snap"');
  });

  it('GraphQL reads them', async () => {
    const reply = await call('POST', '/graphql', { query: '{ per_sensor(order_by: [{sensor: asc}]) { sensor } }' });
    expect(reply.body.errors, JSON.stringify(reply.body)).toBeUndefined();
    expect(reply.body.data.per_sensor.map((r: { sensor: string }) => r.sensor)).toEqual(['a', 'b', 'c']);
  });

  it('restart and replay give the same rows and the same populated state', async () => {
    await sql('CREATE MATERIALIZED VIEW empty_until_refresh AS SELECT id FROM readings WITH NO DATA');
    const before = await readAll();
    await server!.close();
    server = await startTestServer({ dataDir });
    expect(await readAll()).toEqual(before);
    await server.close();
    server = null;
    const replayed = await runCli(['replay', '--data', dataDir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    server = await startTestServer({ dataDir });
    expect(await readAll()).toEqual(before);
    const refused = await call('POST', '/query', { sql: 'SELECT * FROM empty_until_refresh' });
    expect(refused.body.error).toMatchObject({ code: 'INVALID_STATE', message: 'materialized view "empty_until_refresh" has not been populated' });
    expect(refused.body.error.details.sqlstate).toBe('55000');
    expect(before.copied.map((r) => r.id)).toEqual([1, 2, 10]);
    await sql('INSERT INTO copied VALUES (11, 0.25)');
    expect((await sql('SELECT count(*)::int AS n FROM copied'))[0].n).toBe(4);
    await sql('REFRESH MATERIALIZED VIEW snap');
    expect((await sql('SELECT count(*)::int AS n FROM snap'))[0].n).toBe(5);
  });
});
