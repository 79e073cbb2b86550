/**
 * Threat: a forged or abusive JWT. `alg: none` in any spelling, a token signed with the wrong kind
 * of key (HS256 keyed with the RSA public key, ES256 where RS256 is configured, a key embedded in
 * the header), a far-future nbf, a huge token or payload, unknown critical headers: all 401,
 * quickly, without echoing the token. A real server with an HS256 secret and an RS256 public key.
 */
import { createHmac, createSign, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, bearer, keyPair, signJwt } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

const SECRET = 'jwt-suite-secret-of-at-least-32-characters';
const rsa = keyPair('rsa');
const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const nowS = (): number => Math.floor(Date.now() / 1000);

/** A compact JWS from raw parts, signed HS256 with `key` (or unsigned when key is null). */
function handmade(header: Record<string, unknown>, payload: Record<string, unknown>, key: string | Buffer | null): string {
  const input = `${b64(header)}.${b64(payload)}`;
  if (key === null) return `${input}.`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** An RS256 signature over raw parts with `privateKey` (node's crypto, no library checks in the way). */
function rs256(header: Record<string, unknown>, payload: Record<string, unknown>, privateKey: import('node:crypto').KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')}`;
}

let server: TestServer;
const claims = { sub: 'mallory', role: 'admin' };

async function attempt(token: string): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const answer = await api(server.baseUrl, '/query', { headers: bearer(token), body: { sql: 'SELECT 1 AS one' } });
  return { status: answer.status, body: answer.body, ms: Date.now() - started };
}

async function expectRefused(token: string, why: RegExp): Promise<void> {
  const answer = await attempt(token);
  expect(answer.status, JSON.stringify(answer.body)).toBe(401);
  expect(answer.body.error.code).toBe('AUTHENTICATION_FAILED');
  expect(answer.body.error.message).toMatch(why);
  expect(JSON.stringify(answer.body)).not.toContain(token.split('.')[1] ?? token);
}

beforeAll(async () => {
  server = await startTestServer({ env: { SVC_JWT_SECRET: SECRET, SVC_JWT_PUBLIC_KEY: rsa.publicPem } });
});
afterAll(() => server?.close());

describe('JWT attacks', () => {
  it('the genuine tokens work (so the refusals below are about the attack, not the setup)', async () => {
    expect((await attempt(await signJwt({ alg: 'HS256', key: new TextEncoder().encode(SECRET) }, claims, 600))).status).toBe(200);
    expect((await attempt(await signJwt({ alg: 'RS256', key: rsa.privateKey }, claims, 600))).status).toBe(200);
  });

  it('alg none, in any spelling, signed or not, is refused', async () => {
    for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
      await expectRefused(handmade({ alg, typ: 'JWT' }, claims, null), /not accepted/);
      await expectRefused(handmade({ alg, typ: 'JWT' }, claims, SECRET), /not accepted/);
    }
    // A header without alg at all.
    await expectRefused(handmade({ typ: 'JWT' }, claims, SECRET), /malformed token/);
  });

  it('a token signed with the wrong kind of key is refused', async () => {
    // The classic confusion: HS256 keyed with the (public) RSA key, hoping the server uses it as an HMAC secret.
    await expectRefused(handmade({ alg: 'HS256', typ: 'JWT' }, claims, rsa.publicPem), /signature/);
    // ES256 where only RS256 and HS256 are configured.
    const ec = keyPair('ec');
    await expectRefused(await signJwt({ alg: 'ES256', key: ec.privateKey }, claims, 600), /ES256 is not accepted/);
    // RS256 signed by another RSA key, with that key embedded in the header (jwk) or pointed at (jku, kid).
    const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = attacker.publicKey.export({ format: 'jwk' });
    for (const header of [
      { alg: 'RS256' },
      { alg: 'RS256', jwk },
      { alg: 'RS256', jku: 'https://attacker.test/keys' },
      { alg: 'RS256', kid: '../../../dev/null' },
    ]) {
      await expectRefused(rs256(header, claims, attacker.privateKey), /signature|malformed/);
    }
    // PS256 and HS512 are other algorithms than the configured ones.
    await expectRefused(handmade({ alg: 'HS512' }, claims, SECRET), /HS512 is not accepted/);
  });

  it('a far-future nbf is refused; within the 30 s clock tolerance it is accepted', async () => {
    const hs = { alg: 'HS256' as const, key: new TextEncoder().encode(SECRET) };
    await expectRefused(await signJwt(hs, { ...claims, nbf: nowS() + 365 * 86_400 }, 600), /nbf/);
    await expectRefused(await signJwt(hs, { ...claims, nbf: nowS() + 120 }, 600), /nbf/);
    expect((await attempt(await signJwt(hs, { ...claims, nbf: nowS() + 10 }, 600))).status).toBe(200);
    // A malformed nbf is a refused claim too, not a crash.
    await expectRefused(handmade({ alg: 'HS256' }, { ...claims, nbf: 'tomorrow' }, SECRET), /nbf/);
    await expectRefused(handmade({ alg: 'HS256' }, { ...claims, exp: 'never' }, SECRET), /exp/);
  });

  it('a huge token or payload is refused without being parsed, and fast', async () => {
    const hs = { alg: 'HS256' as const, key: new TextEncoder().encode(SECRET) };
    // Past node's 16 KiB of headers the request never reaches the auth hook: 400 headers_too_large.
    for (const padding of [15_000, 1_000_000]) {
      const huge = await signJwt(hs, { ...claims, pad: 'y'.repeat(padding) }, 600);
      const tooLarge = await attempt(huge);
      expect(tooLarge.status).toBe(400);
      expect(tooLarge.body.error.details).toMatchObject({ reason: 'headers_too_large', limit_bytes: 16_384 });
      expect(tooLarge.ms).toBeLessThan(2000);
    }
    // A large forged token under that limit is checked and refused like a small one.
    const forged = handmade({ alg: 'HS256' }, { ...claims, pad: 'z'.repeat(10_000) }, 'not-the-secret');
    await expectRefused(forged, /signature/);
    // Deeply nested claims under the size limit are only data.
    let nested: unknown = 'leaf';
    for (let i = 0; i < 2000; i++) nested = [nested];
    const deep = handmade({ alg: 'HS256' }, { ...claims, nested }, SECRET);
    expect(deep.length).toBeLessThan(16 * 1024);
    expect((await attempt(deep)).status).toBe(200);
    // A role or tenant claim that is huge is refused without being echoed.
    const hugeRole = await attempt(await signJwt(hs, { sub: 'x', role: 'r'.repeat(10_000) }, 600));
    expect(hugeRole.status).toBe(403);
    expect(JSON.stringify(hugeRole.body).length).toBeLessThan(1000);
  });

  it('malformed tokens and unknown critical headers are refused', async () => {
    await expectRefused(`${b64('not json')}.${b64(claims)}.sig`, /malformed token/);
    await expectRefused(
      `${b64({ alg: 'HS256' })}.${b64('not json')}.${createHmac('sha256', SECRET)
        .update(`${b64({ alg: 'HS256' })}.${b64('not json')}`)
        .digest('base64url')}`,
      /malformed token|invalid/,
    );
    await expectRefused(handmade({ alg: 'HS256', crit: ['exp-extension'], 'exp-extension': true }, claims, SECRET), /malformed token|not supported|crit/i);
    await expectRefused(handmade({ alg: 'HS256', b64: false, crit: ['b64'] }, claims, SECRET), /malformed token|signature|invalid/);
    const noSub = handmade({ alg: 'HS256' }, { role: 'admin' }, SECRET);
    await expectRefused(noSub, /sub/);
  });
});
