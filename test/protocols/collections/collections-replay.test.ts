/**
 * Collection writes go through the engine and the log: after a restart and `svcdb replay` (which
 * rebuilds every projection from the log alone) the collections read back exactly as they were.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { startTestServer, type TestServer } from '../../helpers/sql-server.js';
import { v1 } from './client.js';

let dataDir = '';
let server: TestServer | null = null;

afterAll(async () => {
  await server?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('collections across restart and replay', () => {
  it('every create, replace, merge and delete is in the log', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-collections-'));
    server = await startTestServer({ dataDir });
    const key = server.apiKey;
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await v1(server.baseUrl, '/api/notes', { key, body: { name, n: name.charCodeAt(0) } })).body.id);
    await v1(server.baseUrl, `/api/notes/${ids[0]}`, { key, method: 'PUT', body: { name: 'a2', tag: 'replaced' } });
    await v1(server.baseUrl, `/api/notes/${ids[1]}`, { key, method: 'PATCH', body: { n: null, more: { deep: true } } });
    expect((await v1(server.baseUrl, `/api/notes/${ids[2]}`, { key, method: 'DELETE' })).status).toBe(204);
    const before = (await v1(server.baseUrl, '/api/notes', { key })).body;
    expect(before).toHaveLength(2);
    await server.close();
    server = null;
    const replayed = await runCli(['replay', '--data', dataDir]);
    expect(replayed.code, replayed.stderr).toBe(0);
    server = await startTestServer({ dataDir });
    expect((await v1(server.baseUrl, '/api/notes', { key })).body).toEqual(before);
  });
});
