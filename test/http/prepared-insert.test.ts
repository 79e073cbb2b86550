import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, eventually, newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * POST /query's prepared INSERT (SqlEngine.preparedInsert: a text sent again whose binding is kept
 * goes straight to its insert) against the general path. Two servers get the same random steps:
 * `direct` always the same text (after its first run, every run takes the direct path), `general`
 * a text made new by a comment each time (parsed, bound and run by execute()). Status, body
 * (request ids and timings left out), the rows left and the query metrics must be the same:
 * successes, duplicate keys, NOT NULL and CHECK violations, wrong parameter types and counts, a
 * read_only key's refusal, another tenant's table of the same name, include_metadata.
 */
describe('POST /query: a prepared INSERT answers as the general path does', () => {
  const servers: { direct: TestServer | null; general: TestServer | null } = { direct: null, general: null };
  const keys = { direct: { reader: '', acme: '' }, general: { reader: '', acme: '' } };
  const TEXT = 'INSERT INTO pi (id, name, n) VALUES ($1, $2, $3)';
  let nonce = 0;

  type Side = 'direct' | 'general';
  const post = async (side: Side, credential: string, body: Record<string, unknown>) => {
    const server = servers[side]!;
    const r = await fetch(`${server.baseUrl}/api/v1/query`, {
      method: 'POST',
      headers: { ...bearer(credential), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json = (await r.json()) as Record<string, unknown>;
    return { status: r.status, body: comparable(json) };
  };
  const metrics = async (side: Side): Promise<string[]> => {
    const server = servers[side]!;
    const text = await (await fetch(`${server.baseUrl}/api/v1/metrics`, { headers: bearer(server.apiKey) })).text();
    return text.split('\n').filter((l) => l.startsWith('svc_queries_total{'));
  };

  beforeAll(async () => {
    for (const side of ['direct', 'general'] as const) {
      const server = await startTestServer();
      servers[side] = server;
      keys[side].reader = (await newKey(server.dataDir, { role: 'read_only' })).key;
      keys[side].acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
      await eventually(async () => (await post(side, keys[side].acme, { sql: 'SELECT 1' })).status === 200);
      const admin = server.apiKey;
      expect((await post(side, admin, { sql: 'CREATE TABLE pi (id BIGINT PRIMARY KEY, name TEXT NOT NULL, n INTEGER CHECK (n >= 0))' })).status).toBe(200);
      // The other tenant's pi: the same text means another table there (n is text, no CHECK).
      expect((await post(side, keys[side].acme, { sql: 'CREATE TABLE pi (id BIGINT PRIMARY KEY, name TEXT, n TEXT)' })).status).toBe(200);
    }
  });
  afterAll(async () => {
    await servers.direct?.close();
    await servers.general?.close();
  });

  it('random steps give the same answers, rows and metrics on both paths', async () => {
    // mulberry32: a seeded generator whose low bits are as random as the rest.
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
    };
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    const values = [() => ids[random(ids.length)], () => 'x', () => null, () => '12', () => 2 ** 63];
    const names = [() => 'a', () => null, () => 5, () => 'é😀'];
    const ns = [() => 1, () => -1, () => null, () => 'seven', () => 2 ** 31];
    let direct = 0;
    for (let step = 0; step < 160; step++) {
      const who = random(6);
      const credential = (side: Side): string => (who === 0 ? keys[side].reader : who === 1 ? keys[side].acme : servers[side]!.apiKey);
      const params = [values[random(3) === 0 ? random(values.length) : 0]!(), names[random(4) === 0 ? random(names.length) : 0]!(), ns[random(ns.length)]!()];
      const shape = random(8);
      // Now and then one parameter too few or too many, or metadata asked for.
      const sent = shape === 0 ? params.slice(0, 2) : shape === 1 ? [...params, 1] : params;
      const extra = shape === 2 ? { include_metadata: true } : {};
      nonce += 1;
      const a = await post('direct', credential('direct'), { sql: TEXT, params: sent, ...extra });
      const b = await post('general', credential('general'), { sql: `${TEXT} /* ${nonce} */`, params: sent, ...extra });
      expect(a, `step ${step}: ${JSON.stringify({ who, sent })}`).toEqual(b);
      if (a.status === 200) direct += 1;
    }
    expect(direct).toBeGreaterThan(20);
    for (const [credential, table] of [
      [(side: Side) => servers[side]!.apiKey, 'pi'],
      [(side: Side) => keys[side].acme, 'pi'],
    ] as const) {
      const read = { sql: `SELECT * FROM ${table} ORDER BY id` };
      expect(await post('direct', credential('direct'), read)).toEqual(await post('general', credential('general'), read));
    }
    // The direct path ran (its binding was reused), and reported every run to the metrics as the general path did.
    expect(servers.direct!.sql.insertCacheStats().hits).toBeGreaterThan(20);
    expect(await metrics('direct')).toEqual(await metrics('general'));
  });
});

/** A body without what differs between two runs of the same step: request ids, timings, query ids. */
function comparable(body: Record<string, unknown>): Record<string, unknown> {
  const error = body.error as Record<string, unknown> | undefined;
  if (error !== undefined) return { error: { ...error, request_id: typeof error.request_id } };
  const metadata = body.metadata as Record<string, unknown> | undefined;
  if (metadata !== undefined)
    return { ...body, metadata: { ...metadata, execution_time_ms: typeof metadata.execution_time_ms, query_id: typeof metadata.query_id } };
  return body;
}
