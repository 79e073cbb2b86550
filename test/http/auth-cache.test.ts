import { readFile, rename, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../protocols/index.js';
import { apiKeysFile } from '../../protocols/auth/api-keys.js';
import { AUTH_LIMITS } from '../../protocols/auth/limits.js';
import { api, bearer, newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * The authenticator remembers verified keys (protocols/auth/authenticator.ts) so a key is hashed
 * once: a revoked or changed key must still be refused as soon as the server has looked at the
 * key file again (AUTH_LIMITS.keyFileCheckIntervalMs), however often it was used before.
 */
describe('remembered credentials: revocation and changes take effect at the next look at the key file', () => {
  let server: TestServer;
  const table = { name: 'things', columns: [{ name: 'id', type: 'INTEGER', primary_key: true }] };
  const status = async (key: string, path = '/tables/things/rows/1', extra: Record<string, string> = {}) =>
    (await api(server.baseUrl, path, { headers: { ...bearer(key), ...extra } })).status;
  /** Milliseconds until `check` holds, polling every 20 ms (fails past `limitMs`). */
  const msUntil = async (check: () => Promise<boolean>, limitMs: number): Promise<number> => {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > limitMs) throw new Error(`not within ${limitMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return Date.now() - started;
  };
  /** The longest a change may take to count: one look interval, plus time for a busy machine. */
  const promptMs = AUTH_LIMITS.keyFileCheckIntervalMs + 4000;

  beforeAll(async () => {
    server = await startTestServer();
    expect((await api(server.baseUrl, '/tables', { headers: bearer(server.apiKey), body: table })).status).toBe(201);
    await api(server.baseUrl, '/tables/things/rows', { headers: bearer(server.apiKey), body: { row: { id: 1 } } });
  });
  afterAll(() => server?.close());

  it('a key used many times is refused once revoked, and stays refused', async () => {
    const { key, id } = await newKey(server.dataDir, { role: 'read_only' });
    await msUntil(async () => (await status(key)) === 200, promptMs);
    for (let i = 0; i < 20; i++) expect(await status(key)).toBe(200);
    await revokeApiKey(server.dataDir, id);
    await msUntil(async () => (await status(key)) === 401, promptMs);
    for (let i = 0; i < 10; i++) expect(await status(key)).toBe(401);
    const refused = await api(server.baseUrl, '/tables/things/rows/1', { headers: bearer(key) });
    expect(refused.body.error.code).toBe('AUTHENTICATION_FAILED');
    expect(refused.body.error.message).toMatch(/revoked/);
  });

  it('a key whose role or tenant changes in the file is used with the new ones', async () => {
    const { key, id } = await newKey(server.dataDir, { role: 'read_write' });
    await msUntil(async () => (await status(key)) === 200, promptMs);
    const insert = (n: number) => api(server.baseUrl, '/tables/things/rows', { headers: bearer(key), body: { row: { id: n } } });
    expect((await insert(10)).status).toBe(201);
    // Rewritten as svcdb keys writes it (whole, renamed over the old file): now read_only, bound to tenant t2.
    const file = apiKeysFile(server.dataDir);
    const content = JSON.parse(await readFile(file, 'utf8')) as { keys: { id: string; role: string; tenant: string | null }[] };
    content.keys = content.keys.map((k) => (k.id === id ? { ...k, role: 'read_only', tenant: 't2' } : k));
    await writeFile(`${file}.tmp`, JSON.stringify(content, null, 2) + '\n', { mode: 0o600 });
    await rename(`${file}.tmp`, file);
    let n = 11;
    await msUntil(async () => (await insert(n++)).status === 403, promptMs);
    // Bound to t2 now: the default tenant's table is not its own, t2 has no such table.
    expect(await status(key)).toBe(404);
    expect(await status(key, '/tables/things/rows/1', { 'x-tenant-id': 'default' })).toBe(403);
  });

  it('the admin key is remembered; keys that differ from it by a character are not it', async () => {
    for (let i = 0; i < 5; i++) expect(await status(server.apiKey)).toBe(200);
    for (const wrong of [`${server.apiKey}x`, server.apiKey.slice(0, -1), `x${server.apiKey}`, server.apiKey.toUpperCase()]) {
      expect(await status(wrong)).toBe(401);
    }
    expect(await status(server.apiKey)).toBe(200);
  });
});
