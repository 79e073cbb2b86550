/**
 * Threat: one client reaches another's data. Async queries and transactions belong to the
 * credential that made them (404 to any other, an admin of the tenant excepted); tables, rows and
 * vectors belong to a tenant (404 from any other tenant, over REST, SQL and the vector protocol).
 * A real server, real API keys and JWTs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, newKey, signJwt, untilStatus } from '../helpers/auth.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';

const JWT_SECRET = 'access-suite-jwt-secret-of-32-characters!';
const hs256 = { alg: 'HS256' as const, key: new TextEncoder().encode(JWT_SECRET) };
/** A few seconds of work: long enough to be running while others try to reach it. */
const LONG = 'SELECT count(*) FROM big a, big b';

let server: TestServer;
const who: Record<string, Record<string, string>> = {};
const call = (as: string, method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
  api(server.baseUrl, path, { method, headers: { ...who[as], ...extra }, ...(body === undefined ? {} : { body }) });

/** What an unknown id answers: another credential's record must look exactly like it. */
async function expectLikeMissing(answer: { status: number; body: any }, kind: 'query' | 'transaction'): Promise<void> {
  expect(answer.status).toBe(404);
  expect(answer.body.error.code).toBe('NOT_FOUND');
  expect(answer.body.error.message).toMatch(kind === 'query' ? /^async query \S+ does not exist/ : /^transaction \S+ does not exist/);
}

async function untilQuery(as: string, id: string, done: (record: any) => boolean): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const r = await call(as, 'GET', `/query/${id}`);
    if (done(r.body)) return r.body;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`async query ${id} never reached the state`);
}

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_JWT_SECRET: JWT_SECRET, SVC_ASYNC_QUERY_CONCURRENCY_MAX: '1' } });
  who.admin = bearer(TEST_API_KEY);
  who.alice = bearer((await newKey(server.dataDir, { role: 'read_write', name: 'alice' })).key);
  who.bob = bearer((await newKey(server.dataDir, { role: 'read_write', name: 'bob' })).key);
  who.reader = bearer((await newKey(server.dataDir, { role: 'read_only', name: 'reader' })).key);
  who.acme = bearer((await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key);
  who.acmeAdmin = bearer((await newKey(server.dataDir, { role: 'admin', tenant: 'acme' })).key);
  who.jwtAlice = bearer(await signJwt(hs256, { sub: 'alice', role: 'read_write' }, 600));
  who.jwtAdmin = bearer(await signJwt(hs256, { sub: 'ops', role: 'admin' }, 600));
  await untilStatus(server.baseUrl, who.acmeAdmin.authorization!.slice(7), 200);
  for (const text of [
    'CREATE TABLE big (i INTEGER PRIMARY KEY)',
    'INSERT INTO big SELECT g FROM generate_series(1, 30000) g',
    'CREATE TABLE secrets (id INT PRIMARY KEY, note TEXT, embedding VECTOR(3))',
    "INSERT INTO secrets VALUES (1, 'default tenant only', '[1,0,0]')",
    'CREATE INDEX secrets_hnsw ON secrets USING hnsw (embedding vector_l2_ops)',
  ])
    expect((await call('admin', 'POST', '/query', { sql: text })).status, text).toBe(200);
});
afterAll(() => server?.close());

describe('async queries belong to their credential', () => {
  it('GET, its result and DELETE answer 404 to another credential of the same tenant, as for an unknown id', async () => {
    const mine = await call('alice', 'POST', '/query/async', { sql: "SELECT 'alice only' AS note" });
    expect(mine.status).toBe(202);
    const id = mine.body.query_id as string;
    expect((await untilQuery('alice', id, (r) => r.status === 'completed')).data).toEqual([{ note: 'alice only' }]);
    for (const other of ['bob', 'reader', 'jwtAlice', 'acme', 'acmeAdmin']) {
      await expectLikeMissing(await call(other, 'GET', `/query/${id}`), 'query');
      await expectLikeMissing(await call(other, 'DELETE', `/query/${id}`), 'query');
    }
    await expectLikeMissing(await call('bob', 'GET', '/query/01ARZ3NDEKTSV4RRFFQ69G5FAV'), 'query');
    // Still there, untouched, for its owner.
    expect((await call('alice', 'GET', `/query/${id}`)).body).toMatchObject({ status: 'completed', data: [{ note: 'alice only' }] });
  });

  it('another credential cannot cancel a running or pending query; its owner and an admin of the tenant can', async () => {
    const running = await call('alice', 'POST', '/query/async', { sql: LONG, timeout_ms: 60_000 });
    const pending = await call('alice', 'POST', '/query/async', { sql: 'SELECT 1 AS one' });
    await untilQuery('alice', running.body.query_id, (r) => r.status === 'running');
    await expectLikeMissing(await call('bob', 'DELETE', `/query/${running.body.query_id}`), 'query');
    await expectLikeMissing(await call('bob', 'DELETE', `/query/${pending.body.query_id}`), 'query');
    expect((await call('alice', 'GET', `/query/${running.body.query_id}`)).body.status).toBe('running');
    expect((await call('alice', 'GET', `/query/${pending.body.query_id}`)).body.status).toBe('pending');
    // An admin of the tenant sees and cancels every record of it (the admin key, an admin JWT).
    expect((await call('jwtAdmin', 'GET', `/query/${pending.body.query_id}`)).body.status).toBe('pending');
    expect((await call('alice', 'DELETE', `/query/${pending.body.query_id}`)).body.status).toBe('cancelled');
    expect((await call('admin', 'DELETE', `/query/${running.body.query_id}`)).body.status).toBe('cancelled');
  });

  it('an admin bound to another tenant sees nothing of this one', async () => {
    const mine = await call('alice', 'POST', '/query/async', { sql: 'SELECT 2 AS two' });
    await untilQuery('alice', mine.body.query_id, (r) => r.status === 'completed');
    await expectLikeMissing(await call('acmeAdmin', 'GET', `/query/${mine.body.query_id}`), 'query');
    expect((await call('acmeAdmin', 'GET', `/query/${mine.body.query_id}`, undefined, { 'x-tenant-id': 'default' })).status).toBe(403);
  });
});

describe('a transaction id is usable only by the credential that began it', () => {
  it('GET, query, commit and rollback are 404 to another credential; the owner carries on', async () => {
    const begun = await call('alice', 'POST', '/transactions', {});
    expect(begun.status).toBe(201);
    const id = begun.body.transaction_id as string;
    expect((await call('alice', 'POST', `/transactions/${id}/query`, { sql: "INSERT INTO secrets VALUES (2, 'staged by alice', NULL)" })).status).toBe(200);
    for (const other of ['bob', 'reader', 'jwtAlice', 'acme', 'acmeAdmin']) {
      await expectLikeMissing(await call(other, 'GET', `/transactions/${id}`), 'transaction');
      await expectLikeMissing(await call(other, 'POST', `/transactions/${id}/query`, { sql: 'SELECT note FROM secrets WHERE id = 2' }), 'transaction');
      await expectLikeMissing(await call(other, 'POST', `/transactions/${id}/commit`), 'transaction');
      await expectLikeMissing(await call(other, 'POST', `/transactions/${id}/rollback`), 'transaction');
    }
    expect((await call('alice', 'GET', `/transactions/${id}`)).body.status).toBe('open');
    expect((await call('alice', 'POST', `/transactions/${id}/commit`)).status).toBe(200);
    // Ended: still nobody else's to read.
    await expectLikeMissing(await call('bob', 'GET', `/transactions/${id}`), 'transaction');
  });

  it("an admin of the tenant may roll back anyone's transaction", async () => {
    const begun = await call('bob', 'POST', '/transactions', {});
    const id = begun.body.transaction_id as string;
    expect((await call('jwtAdmin', 'GET', `/transactions/${id}`)).body.status).toBe('open');
    expect((await call('admin', 'POST', `/transactions/${id}/rollback`)).status).toBe(200);
    expect((await call('bob', 'GET', `/transactions/${id}`)).body.status).toBe('rolled_back');
  });
});

describe('tables, rows and vectors belong to a tenant', () => {
  it('another tenant gets 404 for the table, its rows, SQL on it, and vectors of it', async () => {
    expect((await call('acme', 'GET', '/tables/secrets')).status).toBe(404);
    expect((await call('acme', 'GET', '/tables/secrets/rows')).status).toBe(404);
    expect((await call('acme', 'GET', '/tables/secrets/rows/1')).status).toBe(404);
    expect((await call('acme', 'PATCH', '/tables/secrets/rows/1', { updates: { note: 'x' } })).status).toBe(404);
    expect((await call('acme', 'DELETE', '/tables/secrets/rows/1')).status).toBe(404);
    expect((await call('acme', 'DELETE', '/tables/secrets')).status).toBe(404);
    const viaSql = await call('acme', 'POST', '/query', { sql: 'SELECT note FROM secrets' });
    expect(viaSql.body.error.code).toBe('TABLE_NOT_FOUND');
    const listed = await call('acme', 'GET', '/tables');
    expect(listed.body.tables.map((t: { name: string }) => t.name)).not.toContain('secrets');
    const search = await call('acme', 'POST', '/vectors/search', { index: 'secrets', vector: [1, 0, 0] });
    expect(search.status).toBe(404);
    expect((await call('acme', 'POST', '/vectors/upsert', { table: 'secrets', vectors: [{ id: '9', vector: [0, 1, 0] }] })).status).toBe(404);
    expect((await call('acme', 'DELETE', '/vectors', { table: 'secrets', ids: ['1'] })).status).toBe(404);
    // Untouched in its own tenant.
    const rows = await call('admin', 'POST', '/query', { sql: 'SELECT id, note FROM secrets ORDER BY id' });
    expect(rows.body.data).toEqual([
      { id: 1, note: 'default tenant only' },
      { id: 2, note: 'staged by alice' },
    ]);
  });

  it('the same name in two tenants is two tables', async () => {
    expect(
      (await call('acme', 'POST', '/query', { sql: "CREATE TABLE secrets (id INT PRIMARY KEY, note TEXT); INSERT INTO secrets VALUES (1, 'acme')" })).status,
    ).toBe(200);
    expect((await call('acme', 'GET', '/tables/secrets/rows/1')).body.data).toEqual({ id: 1, note: 'acme' });
    expect((await call('alice', 'GET', '/tables/secrets/rows/1')).body.data).toMatchObject({ note: 'default tenant only' });
  });

  it('the vector protocol keeps tenants apart too', async () => {
    const vector = (as: string, method: string, path: string, body?: unknown) =>
      fetch(`${server.baseUrl}${path}`, {
        method,
        headers: { 'api-key': who[as]!.authorization!.slice(7), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    expect((await vector('admin', 'POST', '/indexes', { name: 'private-idx', dimension: 3, metric: 'euclidean' })).status).toBe(201);
    expect((await vector('admin', 'POST', '/indexes/private-idx/vectors/upsert', { vectors: [{ id: 'a', values: [1, 2, 3] }] })).status).toBe(200);
    expect((await vector('acme', 'GET', '/indexes/private-idx')).status).toBe(404);
    expect((await vector('acme', 'POST', '/indexes/private-idx/query', { vector: [1, 2, 3], topK: 1 })).status).toBe(404);
    expect((await vector('acme', 'GET', '/indexes/private-idx/vectors/fetch?ids=a')).status).toBe(404);
    expect((await vector('acme', 'POST', '/indexes/private-idx/vectors/delete', { ids: ['a'] })).status).toBe(404);
    const listed = (await (await vector('acme', 'GET', '/indexes')).json()) as { indexes: { name: string }[] };
    expect(listed.indexes.map((i) => i.name)).not.toContain('private-idx');
    // A read_only credential of the right tenant reads but cannot write.
    expect((await vector('reader', 'POST', '/indexes/private-idx/query', { vector: [1, 2, 3], topK: 1 })).status).toBe(200);
    expect((await vector('reader', 'POST', '/indexes/private-idx/vectors/upsert', { vectors: [{ id: 'b', values: [1, 2, 3] }] })).status).toBe(403);
  });
});

// CDC streams belong to their tenant: invisible to another tenant's SHOW and GET, which cannot
// pause or drop them either; creating one needs a writing role, reading them over REST the admin
// role. (Webhooks get their cases here when they land.)
describe('CDC streams belong to their tenant', () => {
  const sql = (as: string, text: string) => call(as, 'POST', '/query', { sql: text });

  it('another tenant cannot see, pause, drop or read a stream; roles hold', async () => {
    expect((await sql('admin', 'CREATE TABLE cdc_default_only (id INT PRIMARY KEY)')).status).toBe(200);
    expect((await sql('admin', "CREATE CHANGE DATA CAPTURE ON cdc_default_only TO KAFKA '127.0.0.1:1' AS sec_stream")).status).toBe(200);
    const theirs = await sql('acme', 'SHOW CDC STREAMS');
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual([]);
    for (const text of ['ALTER CDC STREAM sec_stream PAUSE', 'DROP CHANGE DATA CAPTURE sec_stream', 'SHOW CDC STREAM STATUS sec_stream']) {
      const answer = await sql('acmeAdmin', text);
      expect(answer.status, text).toBe(404);
      expect(answer.body.error.code).toBe('NOT_FOUND');
    }
    expect((await call('acmeAdmin', 'GET', '/cdc/streams/sec_stream')).status).toBe(404);
    expect((await call('acmeAdmin', 'GET', '/cdc/streams')).body).toEqual({ streams: [], total_count: 0 });
    // acme has no such table: a stream on it is TABLE_NOT_FOUND, never the default tenant's table.
    const steal = await sql('acmeAdmin', "CREATE CHANGE DATA CAPTURE ON cdc_default_only TO KAFKA '127.0.0.1:1' AS steal");
    expect(steal.status).toBe(404);
    expect(steal.body.error.code).toBe('TABLE_NOT_FOUND');
    // A read_only credential may look but not create; REST reads need the admin role.
    expect((await sql('reader', "CREATE CHANGE DATA CAPTURE ON cdc_default_only TO KAFKA '127.0.0.1:1' AS ro")).status).toBe(403);
    expect((await sql('reader', 'SHOW CDC STREAMS')).body.data.map((r: { name: string }) => r.name)).toEqual(['sec_stream']);
    expect((await call('alice', 'GET', '/cdc/streams')).status).toBe(403);
    expect((await call('admin', 'GET', '/cdc/streams')).body.total_count).toBe(1);
    expect((await sql('admin', 'DROP CHANGE DATA CAPTURE sec_stream')).status).toBe(200);
  });
});
