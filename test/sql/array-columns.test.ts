/**
 * Array columns end to end (issue 15): REST rows as JSON arrays in and out, the table's column
 * types, GraphQL lists and array comparisons, webhook (CDC) events, and the values after a restart
 * and `svcdb replay`. SQL semantics are in test/sql/arrays.slt.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiCall, apiSql } from '../helpers/api-calls.js';
import { runCli } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let dataDir: string;
let server: TestServer | null = null;
let receiver: Receiver | null = null;

const call = (method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> => apiCall(server!, method, route, body);
const sql = (text: string, params: unknown[] = []): Promise<any[]> => apiSql(server!, text, params);

const ROWS = [
  { id: 1, labels: ['a', 'b'], scores: [1, 2, 3], amounts: ['1.50', '2'], big: ['9007199254740993'], docs: [{ k: 1.5 }, [1, 2]] },
  { id: 2, labels: [], scores: null, amounts: null, big: null, docs: null },
  { id: 3, labels: ['b', null], scores: [5], amounts: [], big: [1, null], docs: [null] },
];

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-arrays-'));
  server = await startTestServer({ dataDir });
  receiver = await startReceiver();
  await sql('CREATE TABLE tags (id INT PRIMARY KEY, labels TEXT[] NOT NULL, scores INTEGER[], amounts NUMERIC[], big BIGINT[], docs JSONB[])');
  const hook = await call('POST', '/webhooks', { url: receiver.url, secret: 'array-columns-secret', tables: ['tags'] });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
});

afterAll(async () => {
  await server?.close();
  await receiver?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('array columns over REST, GraphQL, CDC and replay', () => {
  it('REST rows take and give JSON arrays (NULL elements, exact numerics and jsonb kept)', async () => {
    const inserted = await call('POST', '/tables/tags/rows', { rows: ROWS, returning: ['id', 'labels'] });
    expect(inserted.status, JSON.stringify(inserted.body)).toBe(201);
    const page = await call('GET', '/tables/tags/rows?order_by=id');
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    expect(page.body.data).toEqual(ROWS);
    const contains = await call('GET', `/tables/tags/rows?filter=${encodeURIComponent("labels @> '{b}' AND scores IS NOT NULL")}&order_by=id`);
    expect(contains.body.data.map((r: { id: number }) => r.id)).toEqual([1, 3]);
    const equal = await call('GET', `/tables/tags/rows?filter=${encodeURIComponent("scores = '{5}'")}`);
    expect(equal.body.data.map((r: { id: number }) => r.id)).toEqual([3]);
    const patched = await call('PATCH', '/tables/tags/rows/2', { updates: { scores: [7, null], labels: ['z'] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect((await call('GET', '/tables/tags/rows/2')).body.data).toMatchObject({ id: 2, labels: ['z'], scores: [7, null] });
    expect(await sql('SELECT id FROM tags WHERE scores = $1 OR labels && $2 ORDER BY id', [[5], '{z}'])).toEqual([{ id: 2 }, { id: 3 }]);
    const bad = await call('POST', '/tables/tags/rows', { row: { id: 9, labels: ['x'], scores: ['not a number'] } });
    expect(bad.status).toBe(422); // TYPE_MISMATCH
  });

  it('a btree index on an array of JSONB is refused (JSONB is not orderable here; docs/sql.md)', async () => {
    const reply = await call('POST', '/query', { sql: 'CREATE INDEX ON tags (docs)' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toMatch(/btree indexes cannot hold JSONB/);
  });

  it('the table describes array column types', async () => {
    const table = await call('GET', '/tables/tags');
    expect(table.status).toBe(200);
    const types = Object.fromEntries(table.body.columns.map((c: { name: string; type: string }) => [c.name, c.type]));
    expect(types).toMatchObject({ labels: 'TEXT[]', scores: 'INTEGER[]', amounts: 'NUMERIC[]', big: 'BIGINT[]', docs: 'JSONB[]' });
  });

  it('GraphQL gives array columns as lists and filters them with _contains / _eq', async () => {
    const reply = await call('POST', '/graphql', {
      query: '{ tags(where: {labels: {_contains: ["b"]}}, order_by: [{id: asc}]) { id labels scores } eq: tags(where: {scores: {_eq: [5]}}) { id } }',
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.errors).toBeUndefined();
    expect(reply.body.data.tags).toEqual([
      { id: 1, labels: ['a', 'b'], scores: [1, 2, 3] },
      { id: 3, labels: ['b', null], scores: [5] },
    ]);
    expect(reply.body.data.eq).toEqual([{ id: 3 }]);
    const sdl = await call('POST', '/graphql', { query: '{ __type(name: "tags") { fields { name type { kind ofType { kind ofType { name } } } } } }' });
    const labels = sdl.body.data.__type.fields.find((f: { name: string }) => f.name === 'labels');
    expect(labels.type).toEqual({ kind: 'NON_NULL', ofType: { kind: 'LIST', ofType: { name: 'String' } } });
  });

  it('GraphQL mutations take lists for array columns', async () => {
    const reply = await call('POST', '/graphql', {
      query: 'mutation { insert_tags_one(object: {id: 10, labels: ["m", null], scores: [1]}) { id labels scores } }',
    });
    expect(reply.body.errors, JSON.stringify(reply.body)).toBeUndefined();
    expect(reply.body.data.insert_tags_one).toEqual({ id: 10, labels: ['m', null], scores: [1] });
    const removed = await call('POST', '/graphql', { query: 'mutation { delete_tags_by_pk(id: 10) { id } }' });
    expect(removed.body.data.delete_tags_by_pk).toEqual({ id: 10 });
  });

  it('webhook events carry arrays as JSON arrays', async () => {
    await receiver!.until((got) => got.length >= 4);
    const events = receiver!.accepted();
    const first = events.find((e) => e.operation === 'INSERT' && e.data?.id === 1) ?? events.find((e) => JSON.stringify(e).includes('"labels":["a","b"]'));
    expect(JSON.stringify(first)).toContain('"labels":["a","b"]');
    expect(JSON.stringify(first)).toContain('"amounts":["1.50","2"]');
  });

  it('restart and replay give the same values', async () => {
    const read = () => sql('SELECT id, labels::text AS l, scores::text AS s, amounts::text AS a, big::text AS b, docs::text AS d FROM tags ORDER BY id');
    const before = await read();
    expect(before[0]).toEqual({ id: 1, l: '{a,b}', s: '{1,2,3}', a: '{1.50,2}', b: '{9007199254740993}', d: '{"{\\"k\\": 1.5}","[1, 2]"}' });
    await server!.close();
    server = await startTestServer({ dataDir });
    expect(await read()).toEqual(before);
    await server.close();
    server = null;
    const replayed = await runCli(['replay', '--data', dataDir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    server = await startTestServer({ dataDir });
    expect(await read()).toEqual(before);
    expect(await sql("SELECT id FROM tags WHERE labels = '{b,NULL}'")).toEqual([{ id: 3 }]);
  });
});
