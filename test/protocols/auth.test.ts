/**
 * The authentication matrix over a real server: admin key, API keys (roles, tenants, revocation),
 * JWTs (HS256, RS256, ES256; expired, bad signature, unknown role), X-Tenant-ID, read_only.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../protocols/index.js';
import { api, bearer, keyPair, newKey, query, signJwt, untilStatus, type SigningKey } from '../helpers/auth.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';
import { tempDir } from '../helpers/stack.js';

const SECRET = 'a-test-secret-of-at-least-32-characters!';
const hs256: SigningKey = { alg: 'HS256', key: new TextEncoder().encode(SECRET) };
const admin = bearer(TEST_API_KEY);

describe('authentication and authorization of /api/v1', () => {
  let server: TestServer;
  const keys: Record<string, string> = {};
  let revokedId = '';
  beforeAll(async () => {
    server = await startTestServer({ env: { SVC_JWT_SECRET: SECRET } });
    keys.rw = (await newKey(server.dataDir, { role: 'read_write', name: 'app' })).key;
    keys.ro = (await newKey(server.dataDir, { role: 'read_only' })).key;
    keys.acme = (await newKey(server.dataDir, { role: 'read_write', tenant: 'acme' })).key;
    keys.acmeAdmin = (await newKey(server.dataDir, { role: 'admin', tenant: 'acme' })).key;
    const revoked = await newKey(server.dataDir, { role: 'admin' });
    keys.revoked = revoked.key;
    revokedId = revoked.id;
    await untilStatus(server.baseUrl, keys.rw!, 200);
    await revokeApiKey(server.dataDir, revokedId);
    await untilStatus(server.baseUrl, keys.revoked, 401);
  });
  afterAll(() => server?.close());

  it('no credential is 401 AUTHENTICATION_REQUIRED; a wrong one 401 AUTHENTICATION_FAILED', async () => {
    const none = await query(server.baseUrl, {}, 'SELECT 1');
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('AUTHENTICATION_REQUIRED');
    for (const headers of [bearer('svc_wrong'), { 'x-api-key': 'wrong' }, { authorization: 'Basic dXNlcjpwYXNz' }]) {
      const wrong = await query(server.baseUrl, headers, 'SELECT 1');
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe('AUTHENTICATION_FAILED');
      expect(typeof wrong.body.error.request_id).toBe('string');
    }
  });

  it('the admin key and API keys work as Bearer and as X-API-Key; probes need nothing', async () => {
    for (const headers of [admin, { 'x-api-key': TEST_API_KEY }, bearer(keys.rw!), { 'x-api-key': keys.rw! }]) {
      const ok = await query(server.baseUrl, headers, 'SELECT 1 AS one');
      expect(ok.status).toBe(200);
      expect(ok.body.data).toEqual([{ one: 1 }]);
    }
    for (const probe of ['/live', '/ready', '/health']) expect((await api(server.baseUrl, probe)).status).toBe(200);
  });

  it('a revoked key is 401 AUTHENTICATION_FAILED saying so', async () => {
    const r = await query(server.baseUrl, bearer(keys.revoked!), 'SELECT 1');
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe('AUTHENTICATION_FAILED');
    expect(r.body.error.message).toMatch(/revoked/);
  });

  it('read_only reads (query, explain, async) and is refused writes and DDL with 403', async () => {
    await query(server.baseUrl, admin, 'CREATE TABLE ro_t (id INT PRIMARY KEY); INSERT INTO ro_t VALUES (1)');
    const ro = bearer(keys.ro!);
    expect((await query(server.baseUrl, ro, 'SELECT id FROM ro_t')).body.data).toEqual([{ id: 1 }]);
    expect((await api(server.baseUrl, '/query/explain', { headers: ro, body: { sql: 'SELECT * FROM ro_t' } })).status).toBe(200);
    const submitted = await api(server.baseUrl, '/query/async', { headers: ro, body: { sql: 'SELECT 1' } });
    expect(submitted.status).toBe(202);
    expect((await api(server.baseUrl, `/query/${submitted.body.query_id}`, { headers: ro })).status).toBe(200);
    for (const sql of ['INSERT INTO ro_t VALUES (2)', 'UPDATE ro_t SET id = 3', 'DELETE FROM ro_t', 'CREATE TABLE nope (x INT)', 'DROP TABLE ro_t']) {
      const refused = await query(server.baseUrl, ro, sql);
      expect(refused.status, sql).toBe(403);
      expect(refused.body.error.code).toBe('AUTHORIZATION_DENIED');
    }
    expect((await query(server.baseUrl, admin, 'SELECT count(*) AS n FROM ro_t')).body.data).toEqual([{ n: 1 }]);
  });

  it('two tenants can each have a table t and see only their own rows', async () => {
    for (const tenant of ['alpha', 'beta']) {
      const headers = { ...admin, 'x-tenant-id': tenant };
      expect((await query(server.baseUrl, headers, 'CREATE TABLE t (id INT PRIMARY KEY, who TEXT)')).status).toBe(200);
      expect((await query(server.baseUrl, headers, 'INSERT INTO t VALUES (1, $1)', [tenant])).status).toBe(200);
    }
    for (const tenant of ['alpha', 'beta']) {
      const rows = await query(server.baseUrl, { ...admin, 'x-tenant-id': tenant }, 'SELECT who FROM t');
      expect(rows.body.data).toEqual([{ who: tenant }]);
    }
    const fromDefault = await query(server.baseUrl, admin, 'SELECT * FROM t');
    expect(fromDefault.status).toBe(404);
    expect(fromDefault.body.error.code).toBe('TABLE_NOT_FOUND');
  });

  it('a key bound to a tenant works there by default and is refused any other tenant', async () => {
    const acme = bearer(keys.acme!);
    expect((await query(server.baseUrl, acme, 'CREATE TABLE acme_only (id INT PRIMARY KEY)')).status).toBe(200);
    expect((await query(server.baseUrl, { ...acme, 'x-tenant-id': 'acme' }, 'SELECT * FROM acme_only')).status).toBe(200);
    expect((await query(server.baseUrl, { ...admin, 'x-tenant-id': 'acme' }, 'SELECT * FROM acme_only')).status).toBe(200);
    expect((await query(server.baseUrl, admin, 'SELECT * FROM acme_only')).status).toBe(404);
    for (const headers of [
      { ...acme, 'x-tenant-id': 'default' },
      { ...bearer(keys.acmeAdmin!), 'x-tenant-id': 'other' },
    ]) {
      const other = await query(server.baseUrl, headers, 'SELECT 1');
      expect(other.status).toBe(403);
      expect(other.body.error.code).toBe('AUTHORIZATION_DENIED');
    }
  });

  it('an unbound non-admin key works in the default tenant only; a malformed X-Tenant-ID is 400', async () => {
    expect((await query(server.baseUrl, { ...bearer(keys.rw!), 'x-tenant-id': 'default' }, 'SELECT 1')).status).toBe(200);
    expect((await query(server.baseUrl, { ...bearer(keys.rw!), 'x-tenant-id': 'alpha' }, 'SELECT 1')).status).toBe(403);
    for (const bad of ['has space', 'a/b', 'x'.repeat(65)]) {
      const r = await query(server.baseUrl, { ...admin, 'x-tenant-id': bad }, 'SELECT 1');
      expect(r.status, bad).toBe(400);
      expect(r.body.error.details).toMatchObject({ location: 'headers', field: 'x-tenant-id' });
    }
  });

  describe('HS256 JWTs (SVC_JWT_SECRET)', () => {
    it('a valid token authenticates as its sub with its role and tenant', async () => {
      const token = await signJwt(hs256, { sub: 'user-1', role: 'read_write', tenant: 'alpha' }, 600);
      const r = await query(server.baseUrl, bearer(token), 'SELECT who FROM t');
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual([{ who: 'alpha' }]);
      expect((await query(server.baseUrl, { ...bearer(token), 'x-tenant-id': 'beta' }, 'SELECT 1')).status).toBe(403);
      const noExp = await signJwt(hs256, { sub: 'user-2', role: 'admin' });
      expect((await query(server.baseUrl, { ...bearer(noExp), 'x-tenant-id': 'beta' }, 'SELECT who FROM t')).body.data).toEqual([{ who: 'beta' }]);
    });

    it('an expired token is 401 AUTHENTICATION_FAILED saying expired', async () => {
      const token = await signJwt(hs256, { sub: 'user-1', role: 'admin' }, -3600);
      const r = await query(server.baseUrl, bearer(token), 'SELECT 1');
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('AUTHENTICATION_FAILED');
      expect(r.body.error.message).toMatch(/expired/);
    });

    it('a bad signature, an unaccepted algorithm or a missing sub is 401 AUTHENTICATION_FAILED', async () => {
      const forged = await signJwt(
        { alg: 'HS256', key: new TextEncoder().encode('another-secret-of-at-least-32-characters') },
        { sub: 'x', role: 'admin' },
        600,
      );
      const rs = await signJwt({ alg: 'RS256', key: keyPair('rsa').privateKey }, { sub: 'x', role: 'admin' }, 600);
      const noSub = await signJwt(hs256, { role: 'admin' }, 600);
      const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x","role":"admin"}').toString('base64url')}.`;
      for (const [token, message] of [
        [forged, /signature/],
        [rs, /RS256 is not accepted/],
        [noSub, /sub/],
        [unsigned, /none is not accepted/],
      ] as const) {
        const r = await query(server.baseUrl, bearer(token), 'SELECT 1');
        expect(r.status).toBe(401);
        expect(r.body.error.code).toBe('AUTHENTICATION_FAILED');
        expect(r.body.error.message).toMatch(message);
      }
    });

    it('an unknown role claim is 403; no role claim means read_only', async () => {
      const unknown = await query(server.baseUrl, bearer(await signJwt(hs256, { sub: 'x', role: 'superuser' }, 600)), 'SELECT 1');
      expect(unknown.status).toBe(403);
      expect(unknown.body.error.code).toBe('AUTHORIZATION_DENIED');
      const roleless = bearer(await signJwt(hs256, { sub: 'x' }, 600));
      expect((await query(server.baseUrl, roleless, 'SELECT 1')).status).toBe(200);
      expect((await query(server.baseUrl, roleless, 'CREATE TABLE by_roleless (x INT)')).status).toBe(403);
    });
  });
});

describe('RS256 and ES256 JWTs (SVC_JWT_PUBLIC_KEY)', () => {
  it('RS256 with the key as PEM text; iss and aud are checked when set', async () => {
    const { privateKey, publicPem } = keyPair('rsa');
    const server = await startTestServer({ env: { SVC_JWT_PUBLIC_KEY: publicPem, SVC_JWT_ISSUER: 'https://idp.test', SVC_JWT_AUDIENCE: 'svcdb' } });
    try {
      const rs: SigningKey = { alg: 'RS256', key: privateKey };
      const good = await signJwt(rs, { sub: 'u', role: 'read_only', iss: 'https://idp.test', aud: 'svcdb' }, 600);
      expect((await query(server.baseUrl, bearer(good), 'SELECT 1 AS one')).body.data).toEqual([{ one: 1 }]);
      const wrongAud = await signJwt(rs, { sub: 'u', role: 'read_only', iss: 'https://idp.test', aud: 'other' }, 600);
      const wrongKey = await signJwt({ alg: 'RS256', key: keyPair('rsa').privateKey }, { sub: 'u', iss: 'https://idp.test', aud: 'svcdb' }, 600);
      const hs = await signJwt(hs256, { sub: 'u', iss: 'https://idp.test', aud: 'svcdb' }, 600);
      for (const token of [wrongAud, wrongKey, hs]) {
        const r = await query(server.baseUrl, bearer(token), 'SELECT 1');
        expect(r.status).toBe(401);
        expect(r.body.error.code).toBe('AUTHENTICATION_FAILED');
      }
    } finally {
      await server.close();
    }
  });

  it('ES256 with the key in a PEM file', async () => {
    const { privateKey, publicPem } = keyPair('ec');
    const dir = await tempDir('svcdb-es256-');
    const file = path.join(dir.dir, 'es256.pem');
    await writeFile(file, publicPem);
    const server = await startTestServer({ env: { SVC_JWT_PUBLIC_KEY: file } });
    try {
      const token = await signJwt({ alg: 'ES256', key: privateKey }, { sub: 'svc-account', role: 'read_write', tenant: 'gamma' }, 600);
      expect((await query(server.baseUrl, bearer(token), 'CREATE TABLE es (x INT)')).status).toBe(200);
      expect((await query(server.baseUrl, { ...bearer(TEST_API_KEY), 'x-tenant-id': 'gamma' }, 'SELECT * FROM es')).status).toBe(200);
    } finally {
      await server.close();
      await dir.remove();
    }
  });
});
