/** Credentials for tests of protocols/auth: API keys in a data dir, signed JWTs, requests. */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, type JWTPayload } from 'jose';
import { createApiKey, type NewApiKey } from '../../protocols/index.js';

/** A JSON request to `${baseUrl}/api/v1${path}`, answering status, headers and the parsed body. */
export async function api(
  baseUrl: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const init: RequestInit = { method: options.method ?? (options.body === undefined ? 'GET' : 'POST'), headers: { ...options.headers } };
  if (options.body !== undefined) {
    init.body = JSON.stringify(options.body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(`${baseUrl}/api/v1${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

export const bearer = (credential: string): Record<string, string> => ({ authorization: `Bearer ${credential}` });

/** POST /query with a credential (and more headers). */
export const query = (baseUrl: string, headers: Record<string, string>, sql: string, params: unknown[] = []) =>
  api(baseUrl, '/query', { headers, body: { sql, params } });

/** Create an API key in a data dir (as `svcdb keys create` does); returns the key. */
export async function newKey(dataDir: string, spec: Partial<NewApiKey> = {}): Promise<{ key: string; id: string }> {
  const { key, record } = await createApiKey(dataDir, { role: 'read_write', tenant: null, name: null, rateLimitRequestsMax: null, ...spec });
  return { key, id: record.id };
}

/** Poll until `check` holds (the server re-reads the key file about once a second). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Wait until the server answers `status` to SELECT 1 with this credential (the event itself; 30 s at most). */
export const untilStatus = (baseUrl: string, credential: string, status: number): Promise<void> =>
  eventually(async () => (await query(baseUrl, bearer(credential), 'SELECT 1')).status === status, 30_000);

export type SigningKey = { alg: 'HS256'; key: Uint8Array } | { alg: 'RS256' | 'ES256'; key: KeyObject };

/** A signed JWT; `expiresIn` seconds from now (negative: already expired), or no exp when undefined. */
export async function signJwt(signing: SigningKey, claims: JWTPayload, expiresInSeconds?: number): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: signing.alg, typ: 'JWT' }).setIssuedAt();
  if (expiresInSeconds !== undefined) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + expiresInSeconds);
  return jwt.sign(signing.key);
}

/** A fresh key pair: the private KeyObject to sign with and the public key as PEM text. */
export function keyPair(kind: 'rsa' | 'ec'): { privateKey: KeyObject; publicPem: string } {
  const pair = kind === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey: pair.privateKey, publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}
