/**
 * svcdb as an OAuth 2.0 resource server: bearer JWTs of an OpenID provider verified against its
 * JWKS, served by a local provider the test starts (node http, jose keys). RS256, ES256 and EdDSA
 * work; key rotation is picked up; a flood of unknown kids costs the provider one fetch per
 * cooldown; a wrong issuer, audience or algorithm, `none`, HS256 keyed with the public key, an
 * expired exp or a future nbf are 401 and write nothing; a provider that is down is a clear 401
 * while the server keeps serving. The shared-secret mode keeps working beside it.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, keyPair, query, signJwt } from '../helpers/auth.js';
import { providerKey, providerToken, startJwksServer, type JwksServer, type ProviderKey } from '../helpers/jwks-server.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';

const ISSUER = 'https://idp.test/realms/svcdb';
const AUDIENCE = 'svcdb-api';
const SECRET = 'jwks-suite-shared-secret-of-32-chars-at-least';
const COOLDOWN_MS = 500;
const MAX_AGE_MS = 1000;
const admin = bearer(TEST_API_KEY);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Keycloak's shape: roles in realm_access.roles among the provider's own, tenant in a nested claim. */
const claims = (role = 'read_write', extra: Record<string, unknown> = {}) => ({
  sub: 'user-1',
  iss: ISSUER,
  aud: AUDIENCE,
  realm_access: { roles: ['offline_access', role, 'uma_authorization'] },
  org: { tenant: 'acme' },
  ...extra,
});

let provider: JwksServer;
let server: TestServer;
const keys: Record<string, ProviderKey> = {};
let nextId = 1;

/** An INSERT with `token`: answers status and body; `id` is what a success would have written. */
async function insertWith(token: string): Promise<{ status: number; body: any; id: number }> {
  const id = nextId++;
  const answer = await query(server.baseUrl, bearer(token), 'INSERT INTO notes (id) VALUES ($1)', [id]);
  return { status: answer.status, body: answer.body, id };
}

async function rowIds(): Promise<number[]> {
  const answer = await query(server.baseUrl, { ...admin, 'x-tenant-id': 'acme' }, 'SELECT id FROM notes ORDER BY id');
  return answer.body.data.map((r: { id: number }) => r.id);
}

/** Refused with 401 AUTHENTICATION_FAILED, a message matching `why`, and nothing written. */
async function expectRefused(token: string, why: RegExp): Promise<void> {
  const attempt = await insertWith(token);
  expect(attempt.status, JSON.stringify(attempt.body)).toBe(401);
  expect(attempt.body.error.code).toBe('AUTHENTICATION_FAILED');
  expect(attempt.body.error.message).toMatch(why);
  expect(await rowIds()).not.toContain(attempt.id);
}

beforeAll(async () => {
  keys.rsa = await providerKey('RS256', 'rsa-1');
  keys.ec = await providerKey('ES256', 'ec-1');
  keys.ed = await providerKey('EdDSA', 'ed-1');
  provider = await startJwksServer([keys.rsa, keys.ec, keys.ed]);
  server = await startTestServer({
    env: {
      SVC_JWT_JWKS_URL: provider.url,
      SVC_JWT_ISSUER: ISSUER,
      SVC_JWT_AUDIENCE: AUDIENCE,
      SVC_JWT_SECRET: SECRET,
      SVC_JWT_ROLE_CLAIM: 'realm_access.roles',
      SVC_JWT_TENANT_CLAIM: 'org.tenant',
      SVC_JWT_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
      SVC_JWT_JWKS_MAX_AGE_MS: String(MAX_AGE_MS),
    },
  });
  expect((await query(server.baseUrl, { ...admin, 'x-tenant-id': 'acme' }, 'CREATE TABLE notes (id INT PRIMARY KEY)')).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});

describe('JWTs verified against a JWKS', () => {
  it('RS256, ES256 and EdDSA tokens of the provider work; role and tenant come from the configured claims', async () => {
    for (const key of [keys.rsa!, keys.ec!, keys.ed!]) {
      const attempt = await insertWith(await providerToken(key, claims()));
      expect(attempt.status, `${key.alg}: ${JSON.stringify(attempt.body)}`).toBe(200);
      expect(await rowIds()).toContain(attempt.id);
    }
    // The highest svcdb role of the list counts; a list without one is read_only (reads only).
    const reader = await providerToken(keys.rsa!, { ...claims(), realm_access: { roles: ['offline_access'] } });
    expect((await query(server.baseUrl, bearer(reader), 'SELECT count(*) AS n FROM notes')).status).toBe(200);
    expect((await insertWith(reader)).status).toBe(403);
    // The token is bound to its tenant claim: another tenant is 403.
    const other = await query(server.baseUrl, { ...bearer(await providerToken(keys.rsa!, claims())), 'x-tenant-id': 'other' }, 'SELECT 1');
    expect(other.status).toBe(403);
  });

  it('the shared-secret mode keeps working beside the JWKS', async () => {
    const hs = await signJwt({ alg: 'HS256', key: new TextEncoder().encode(SECRET) }, claims(), 600);
    expect((await insertWith(hs)).status).toBe(200);
  });

  it('a key added after start (rotation) is fetched on its unknown kid; a key removed is refused once the set is refetched', async () => {
    await sleep(COOLDOWN_MS + 50);
    keys.rsa2 = await providerKey('RS256', 'rsa-2');
    provider.publish([keys.rsa2, keys.ec!, keys.ed!]);
    const rotated = await insertWith(await providerToken(keys.rsa2, claims()));
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    // rsa-1 is gone from the provider: within max age the set held still has it, after it not.
    await sleep(MAX_AGE_MS + 50);
    await expectRefused(await providerToken(keys.rsa!, claims()), /no key .* matches the token \(kid rsa-1\)/);
  });

  it('a flood of unknown kids costs the provider at most one fetch per cooldown', async () => {
    await sleep(COOLDOWN_MS + 50);
    const before = provider.fetches;
    const started = Date.now();
    const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => providerToken(keys.rsa2!, claims(), { header: { kid: `made-up-${i}` } })));
    const answers = await Promise.all(tokens.map((t) => query(server.baseUrl, bearer(t), 'SELECT 1')));
    const elapsedMs = Date.now() - started;
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 401));
    expect(answers[0]!.body.error.details).toMatchObject({ reason: 'unknown_key' });
    expect(provider.fetches - before).toBeLessThanOrEqual(1 + Math.floor(elapsedMs / COOLDOWN_MS));
  });

  it('a wrong issuer or audience, an expired exp or a future nbf is refused', async () => {
    const key = keys.rsa2!;
    await expectRefused(await providerToken(key, claims('read_write', { iss: 'https://evil.test' })), /iss/);
    await expectRefused(await providerToken(key, claims('read_write', { aud: 'another-api' })), /aud/);
    await expectRefused(await providerToken(key, claims(), { expiresInSeconds: -120 }), /expired/);
    const nowS = Math.floor(Date.now() / 1000);
    await expectRefused(await providerToken(key, claims('read_write', { nbf: nowS + 300 })), /nbf/);
  });

  it('alg none, HS256 keyed with the public key, algorithms beyond RS256/ES256/EdDSA and foreign keys are refused', async () => {
    const payload = claims('admin');
    for (const alg of ['none', 'None']) await expectRefused(`${b64({ alg, kid: 'rsa-2' })}.${b64(payload)}.`, /not accepted/);
    // The confusion attack: HS256 with the published key (its JWK, its n) as the HMAC secret.
    const input = `${b64({ alg: 'HS256', kid: 'rsa-2' })}.${b64(payload)}`;
    for (const secret of [JSON.stringify(keys.rsa2!.jwk), String(keys.rsa2!.jwk.n)]) {
      await expectRefused(`${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`, /signature/);
    }
    const hs512 = `${b64({ alg: 'HS512', kid: 'rsa-2' })}.${b64(payload)}`;
    await expectRefused(`${hs512}.${createHmac('sha512', String(keys.rsa2!.jwk.n)).update(hs512).digest('base64url')}`, /HS512 is not accepted/);
    // RS384 and PS256 are RSA too, but not accepted from a key set.
    for (const alg of ['RS384', 'PS256']) await expectRefused(`${b64({ alg, kid: 'rsa-2' })}.${b64(payload)}.c2ln`, new RegExp(`${alg} is not accepted`));
    // Signed by an attacker's key, naming the provider's kid, or carrying its own key (jwk, jku).
    const attacker = await providerKey('RS256', 'rsa-2');
    await expectRefused(await providerToken(attacker, payload), /signature/);
    await expectRefused(await providerToken(attacker, payload, { header: { jwk: attacker.jwk } }), /signature/);
    await expectRefused(await providerToken(attacker, payload, { header: { kid: 'evil', jku: 'http://127.0.0.1:1/keys' } }), /no key/);
    // An ES256 token naming an RSA kid: no key of that kind.
    await expectRefused(await providerToken(keys.ec!, payload, { header: { kid: 'rsa-2' } }), /no key/);
  });
});

/** A free port on 127.0.0.1, closed again: nothing listens there until we start something on it. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('a provider that is down', () => {
  it('is a clear 401 (the server keeps serving), recovers when the provider is back, and keeps its keys when a refetch fails', async () => {
    const port = await freePort();
    const key = await providerKey('ES256', 'auth0-1');
    // Auth0's custom claims are URLs: the claim name is taken whole before any dotted path.
    const down = await startTestServer({
      env: {
        SVC_JWT_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
        SVC_JWT_ISSUER: ISSUER,
        SVC_JWT_AUDIENCE: AUDIENCE,
        SVC_JWT_ROLE_CLAIM: 'https://svcdb.test/role',
        SVC_JWT_JWKS_COOLDOWN_MS: '200',
        SVC_JWT_JWKS_MAX_AGE_MS: '1000',
      },
    });
    let back: JwksServer | null = null;
    try {
      const token = await providerToken(key, {
        sub: 'auth0|42',
        iss: ISSUER,
        aud: [AUDIENCE, 'https://idp.test/userinfo'],
        'https://svcdb.test/role': 'admin',
      });
      const refused = await query(down.baseUrl, bearer(token), 'SELECT 1');
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 'AUTHENTICATION_FAILED', details: { reason: 'jwks_unavailable' } });
      expect(refused.body.error.message).toMatch(/key set .* could not be fetched \(.*ECONNREFUSED.*\); retry later/);
      // HS256 is not accepted from a key set (no SVC_JWT_SECRET here).
      const hs = await signJwt({ alg: 'HS256', key: new TextEncoder().encode(SECRET) }, { sub: 'x', iss: ISSUER, aud: AUDIENCE }, 600);
      expect((await query(down.baseUrl, bearer(hs), 'SELECT 1')).body.error.message).toMatch(/HS256 is not accepted \(accepted: RS256, ES256, EdDSA\)/);
      expect((await query(down.baseUrl, admin, 'SELECT 1 AS one')).body.data).toEqual([{ one: 1 }]);

      back = await startJwksServer([key], port);
      await sleep(250);
      const ok = await query(down.baseUrl, bearer(token), 'CREATE TABLE t (id INT PRIMARY KEY)');
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);

      back.fail(true);
      await sleep(1100);
      const fetchesBefore = back.fetches;
      expect((await query(down.baseUrl, bearer(token), 'SELECT 1')).status).toBe(200);
      expect(back.fetches).toBe(fetchesBefore + 1);
    } finally {
      await down.close();
      await back?.close();
    }
  });
});

describe('settings', () => {
  it('SVC_JWT_JWKS_URL needs an issuer and an audience, and excludes SVC_JWT_PUBLIC_KEY', async () => {
    const url = 'https://idp.test/.well-known/jwks.json';
    await expect(startTestServer({ env: { SVC_JWT_JWKS_URL: url, SVC_JWT_ISSUER: ISSUER } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: /SVC_JWT_AUDIENCE/,
    });
    await expect(startTestServer({ env: { SVC_JWT_JWKS_URL: 'not a url', SVC_JWT_ISSUER: ISSUER, SVC_JWT_AUDIENCE: AUDIENCE } })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
    });
    const pem = keyPair('ec').publicPem;
    await expect(
      startTestServer({ env: { SVC_JWT_JWKS_URL: url, SVC_JWT_ISSUER: ISSUER, SVC_JWT_AUDIENCE: AUDIENCE, SVC_JWT_PUBLIC_KEY: pem } }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: /not both/ });
  });
});
