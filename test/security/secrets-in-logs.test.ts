/**
 * Threat: secrets leave the process through its logs or its error messages. A real `svcdb serve`
 * at log level trace (every line it can write) is given every kind of secret — the admin key, an
 * API key, JWTs and the JWT secret, the callback (webhook) signing secret, the vector protocol key,
 * and vectors — and used with them, rightly and wrongly; then its whole output is grepped for
 * each. Error answers are checked not to echo what was presented.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, CLI, runCli, serve } from '../helpers/cli.js';
import { signJwt } from '../helpers/auth.js';
import { tempDir } from '../helpers/stack.js';
import { rawConnection, untilClosed } from './helpers.js';

const ADMIN_KEY = 'admin-key-SECRET-aaaa1111';
const JWT_SECRET = 'jwt-secret-SECRET-bbbb2222-of-32-characters';
const CALLBACK_SECRET = 'callback-secret-SECRET-cccc3333';
const VECTOR_KEY = 'vector-key-SECRET-dddd4444';
const WRONG_KEY = 'svc_wrong-key-SECRET-eeee5555';
/** Exact in float4, so every spelling of them (request JSON, float4out) is this text. */
const VECTOR = [0.1171875, 0.3046875, 0.8359375];
const VECTOR_TEXTS = VECTOR.map(String);

let root = '';
let remove: () => Promise<void> = async () => {};
let child: ChildProcess;
let output = '';
let baseUrl = '';
let receiver: Server;
const callbacks: { signature: string | undefined; body: string }[] = [];
const secrets: Record<string, string> = {
  'admin key': ADMIN_KEY,
  'JWT secret': JWT_SECRET,
  'callback secret': CALLBACK_SECRET,
  'vector key': VECTOR_KEY,
  'wrong key': WRONG_KEY,
};
const errorBodies: string[] = [];

async function call(
  pathname: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<{ status: number; text: string }> {
  const headers = { ...init.headers, ...(init.body !== undefined || init.raw !== undefined ? { 'content-type': 'application/json' } : {}) };
  const response = await fetch(`${baseUrl}${pathname}`, {
    method: init.method ?? (init.body === undefined && init.raw === undefined ? 'GET' : 'POST'),
    headers,
    ...(init.raw !== undefined ? { body: init.raw } : init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await response.text();
  if (response.status >= 400) errorBodies.push(text);
  return { status: response.status, text };
}

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

beforeAll(async () => {
  ({ dir: root, remove } = await tempDir('svcdb-sec-logs-'));
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      callbacks.push({ signature: req.headers['x-svc-signature'] as string | undefined, body });
      // The first delivery fails, so the retry path logs too.
      res.writeHead(callbacks.length === 1 ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dataDir = path.join(root, 'data');
  const created = await runCli(['keys', 'create', '--data', dataDir, '--role', 'read_write', '--json']);
  expect(created.code, created.stderr).toBe(0);
  secrets['API key'] = (JSON.parse(created.stdout) as { key: string }).key;
  child = spawn(process.execPath, [CLI, 'serve'], {
    env: cleanEnv({
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_PORT: '0',
      SVC_OPS_PORT: '0',
      SVC_HOST: '127.0.0.1',
      SVC_LOG_LEVEL: 'trace',
      SVC_API_KEY: ADMIN_KEY,
      SVC_JWT_SECRET: JWT_SECRET,
      SVC_ASYNC_QUERY_CALLBACK_SECRET: CALLBACK_SECRET,
      SVC_VECTOR_API_KEY: VECTOR_KEY,
      SVC_HEADERS_TIMEOUT_MS: '1000',
      SVC_REQUEST_TIMEOUT_MS: '2000',
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  for (let i = 0; i < 300 && baseUrl === ''; i++) {
    const m = /"httpUrl":"([^"]+)"/.exec(output);
    if (m) baseUrl = m[1]!;
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(baseUrl, output).not.toBe('');
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
  }
  await new Promise((resolve) => receiver?.close(resolve));
  await remove();
});

describe('secrets never leave the process', () => {
  it('a run that used every kind of secret, rightly and wrongly, logs none of them at any level', async () => {
    const hs256 = { alg: 'HS256' as const, key: new TextEncoder().encode(JWT_SECRET) };
    secrets.JWT = await signJwt(hs256, { sub: 'logged-user', role: 'admin' }, 600);
    const forged = await signJwt(
      { alg: 'HS256', key: new TextEncoder().encode('another-secret-of-at-least-32-characters!') },
      { sub: 'x', role: 'admin' },
      600,
    );
    secrets['forged JWT'] = forged;
    const expired = await signJwt(hs256, { sub: 'late', role: 'admin' }, -3600);
    secrets['expired JWT'] = expired;
    const admin = bearer(ADMIN_KEY);

    expect((await call('/api/v1/query', { headers: admin, body: { sql: 'CREATE TABLE docs (id TEXT PRIMARY KEY, embedding VECTOR(3))' } })).status).toBe(200);
    expect((await call('/api/v1/query', { headers: admin, body: { sql: 'CREATE INDEX docs_hnsw ON docs USING hnsw (embedding vector_l2_ops)' } })).status).toBe(
      200,
    );
    expect((await call('/api/v1/query', { headers: { 'x-api-key': secrets['API key']! }, body: { sql: 'SELECT 1 AS one' } })).status).toBe(200);
    expect((await call('/api/v1/query', { headers: bearer(secrets.JWT), body: { sql: 'SELECT 1 AS one' } })).status).toBe(200);
    // Vectors through REST and through the vector protocol (with its own key).
    expect((await call('/api/v1/vectors/upsert', { headers: admin, body: { table: 'docs', vectors: [{ id: 'a', vector: VECTOR }] } })).status).toBe(200);
    expect((await call('/api/v1/vectors/search', { headers: admin, body: { index: 'docs', vector: VECTOR, include_vectors: true } })).status).toBe(200);
    expect((await call('/indexes', { headers: { 'api-key': VECTOR_KEY }, body: { name: 'idx', dimension: 3, metric: 'euclidean' } })).status).toBe(201);
    expect(
      (
        await call('/indexes/idx/vectors/upsert', {
          headers: { 'api-key': VECTOR_KEY },
          body: { vectors: [{ id: 'v', values: VECTOR, metadata: { tag: 't' } }] },
        })
      ).status,
    ).toBe(200);
    expect((await call('/indexes/idx/query', { headers: { 'api-key': VECTOR_KEY }, body: { vector: VECTOR, topK: 1, includeValues: true } })).status).toBe(200);
    // Wrong credentials of every kind.
    for (const headers of <Record<string, string>[]>[
      bearer(WRONG_KEY),
      { 'x-api-key': WRONG_KEY },
      bearer(forged),
      bearer(expired),
      bearer(`${secrets.JWT}x`),
      { 'api-key': WRONG_KEY },
    ]) {
      expect((await call('/api/v1/query', { headers, body: { sql: 'SELECT 1' } })).status).toBe(401);
    }
    expect((await call('/indexes', { headers: { 'api-key': WRONG_KEY } })).status).toBe(401);
    // A malformed body and a bad vector carrying secrets; an error inside a query.
    expect((await call('/api/v1/query', { headers: admin, raw: `{"sql": "SELECT '${WRONG_KEY}'` })).status).toBe(400);
    expect((await call('/api/v1/vectors/upsert', { headers: admin, body: { table: 'docs', vectors: [{ id: 'b', vector: [...VECTOR, 0.5] }] } })).status).toBe(
      422,
    );
    // The signed callback of an async query (the first delivery fails and is retried).
    const submitted = await call('/api/v1/query/async', {
      headers: admin,
      body: { sql: 'SELECT 42 AS answer', callback_url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
    });
    expect(submitted.status).toBe(202);
    for (let i = 0; i < 100 && callbacks.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(callbacks.length).toBeGreaterThanOrEqual(2);
    const expected = `sha256=${createHmac('sha256', CALLBACK_SECRET).update(callbacks[1]!.body).digest('hex')}`;
    expect(callbacks[1]!.signature).toBe(expected);
    // Requests node's parser refuses, with credentials in their headers: too large, and too slow.
    const big = await rawConnection(baseUrl);
    const bigClosed = untilClosed(big, 5000);
    big.write(`GET /api/v1/tables HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\n`);
    expect((await bigClosed).text).toMatch(/^HTTP\/1\.1 400/);
    const slow = await rawConnection(baseUrl);
    const slowClosed = untilClosed(slow, 5000);
    slow.write(`GET /api/v1/tables HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_KEY}\r\n`);
    expect((await slowClosed).text).toMatch(/^HTTP\/1\.1 408/);

    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    // The log is really at trace/debug: request lines and the callback retry are in it.
    expect(output).toMatch(/"level":20,.*"msg":"request completed"/);
    expect(output).toContain('"msg":"client error"');
    for (const [name, secret] of Object.entries(secrets)) expect(output.includes(secret), `${name} is in the log`).toBe(false);
    // A JWT's signature alone is enough to replay nothing, but it is the token's secret part: not logged either.
    expect(output.includes(secrets.JWT!.split('.')[2]!), 'a JWT signature is in the log').toBe(false);
    for (const text of VECTOR_TEXTS) expect(output.includes(text), `vector element ${text} is in the log`).toBe(false);
    // The bytes of a refused request (node's err.rawPacket) would be logged as a byte array.
    expect(output, 'raw request bytes are in the log').not.toMatch(/"rawPacket":\{/);
  });

  it('error answers never echo a presented credential or secret', () => {
    expect(errorBodies.length).toBeGreaterThan(8);
    for (const body of errorBodies) {
      for (const [name, secret] of Object.entries(secrets)) expect(body.includes(secret), `${name} echoed in ${body}`).toBe(false);
    }
  });

  it('a generated admin key is shown once on stderr, never in the log, and kept only as a 0600 hash', async () => {
    const dir = path.join(root, 'generated');
    const running = await serve(['--data', dir, '--port', '0', '--ops-port', '0', '--host', '127.0.0.1', '--log-level', 'debug']);
    const ok = await fetch(`${running.listening.httpUrl}/api/v1/live`);
    expect(ok.status).toBe(200);
    running.child.kill('SIGTERM');
    const finished = await running.exited;
    const key = /admin API key \(shown once; store it now\): (\S+)/.exec(finished.stderr)?.[1];
    expect(key, finished.stderr).toMatch(/^svc_/);
    expect(finished.stdout).not.toContain(key!);
    const stored = await readFile(path.join(dir, 'admin-key.json'), 'utf8');
    expect(stored).not.toContain(key!);
    expect(JSON.parse(stored).sha256).toBe(createHash('sha256').update(key!).digest('hex'));
    expect((await stat(path.join(dir, 'admin-key.json'))).mode & 0o777).toBe(0o600);
  });

  it('a secret setting with a bad value is refused without echoing it', async () => {
    const refused = await runCli(['serve', '--data', path.join(root, 'other'), '--port', '0', '--ops-port', '0', '--host', '127.0.0.1'], {
      SVC_JWT_SECRET: 'short-SECRET-ffff6666',
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SVC_JWT_SECRET must be at least 32 characters');
    expect(refused.stderr + refused.stdout).not.toContain('short-SECRET-ffff6666');
  });
});
