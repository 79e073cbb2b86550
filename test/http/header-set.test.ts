import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';

/**
 * The whole header block of the answers every route family shares the per-request work of (the
 * listener's hooks, the auth hook, the request id, the rate limit, content negotiation): GET row,
 * POST /query (a point SELECT read first and cached), POST rows, an error answer and a 429. Each
 * header's name, order and value are pinned as node writes them (rawHeaders), so a change that
 * makes the per-request work cheaper cannot drop, add, rename, reorder or reword one. Values that
 * move (the date, the rate-limit counters and clock) are checked by shape and by their rule.
 */
interface Answer {
  readonly status: number;
  readonly headers: [string, string][];
  readonly body: string;
}

const DAY_MS = 86_400_000;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function send(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${baseUrl}${path}`, { method, headers, agent }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        const raw = response.rawHeaders;
        const pairs: [string, string][] = [];
        for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
        resolve({ status: response.statusCode!, headers: pairs, body: text });
      });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The header block with the values that move replaced by their shape (each shape checked on the way). */
function normalized(answer: Answer, nowMs: { before: number; after: number }): [string, string][] {
  return answer.headers.map(([name, value]): [string, string] => {
    switch (name) {
      case 'Date':
        expect(Math.abs(Date.parse(value) - nowMs.after)).toBeLessThan(5_000);
        return [name, '<date>'];
      case 'x-ratelimit-remaining':
      case 'x-ratelimit-reset-after':
      case 'retry-after':
        expect(value).toMatch(/^\d+$/);
        return [name, '<n>'];
      case 'x-ratelimit-reset': {
        // The window's end in epoch seconds: after the request began, at most a window later.
        expect(value).toMatch(/^\d+$/);
        expect(Number(value) * 1000).toBeGreaterThan(nowMs.before);
        return [name, '<epoch s>'];
      }
      default:
        return [name, value];
    }
  });
}

const jsonType = (length: number): [string, string][] => [
  ['content-type', 'application/json; charset=utf-8'],
  ['vary', 'Accept'],
  ['content-length', String(length)],
];
const common = (id: string, limit: string): [string, string][] => [
  ['x-request-id', id],
  ['x-ratelimit-limit', limit],
  ['x-ratelimit-remaining', '<n>'],
  ['x-ratelimit-reset', '<epoch s>'],
  ['x-ratelimit-reset-after', '<n>'],
];
const keepAlive: [string, string][] = [
  ['Date', '<date>'],
  ['Connection', 'keep-alive'],
  ['Keep-Alive', 'timeout=72'],
];

describe('the header block of GET row, POST /query, POST rows, an error and a 429', () => {
  let server: TestServer;
  let limited: TestServer;
  const auth = { authorization: `Bearer ${TEST_API_KEY}` };
  const json = { ...auth, 'content-type': 'application/json' };

  beforeAll(async () => {
    server = await startTestServer();
    limited = await startTestServer({ env: { SVC_RATE_LIMIT_MAX: '2', SVC_RATE_LIMIT_WINDOW_MS: String(DAY_MS) } });
    for (const text of ['CREATE TABLE h (id BIGINT PRIMARY KEY, name TEXT)', "INSERT INTO h VALUES (1, 'one'), (2, 'two')"]) {
      const answer = await send(server.baseUrl, 'POST', '/api/v1/query', json, JSON.stringify({ sql: text }));
      expect(answer.status).toBe(200);
    }
  }, 60_000);

  afterAll(async () => {
    agent.destroy();
    await server?.close();
    await limited?.close();
  });

  const timed = async (answer: () => Promise<Answer>): Promise<{ answer: Answer; headers: [string, string][] }> => {
    const before = Date.now();
    const got = await answer();
    return { answer: got, headers: normalized(got, { before, after: Date.now() }) };
  };

  it('GET row and the point SELECT, first read and cached: the same block each time', async () => {
    for (const round of ['first', 'cached']) {
      const row = await timed(() => send(server.baseUrl, 'GET', '/api/v1/tables/h/rows/1', { ...auth, 'x-request-id': `get-${round}` }));
      expect(row.answer.body).toBe('{"data":{"id":1,"name":"one"}}');
      expect(row.answer.status).toBe(200);
      expect(row.headers).toEqual([...common(`get-${round}`, '100000'), ...jsonType(row.answer.body.length), ...keepAlive]);

      const body = JSON.stringify({ sql: 'SELECT * FROM h WHERE id = $1', params: [2] });
      const select = await timed(() => send(server.baseUrl, 'POST', '/api/v1/query', { ...json, 'x-request-id': `select-${round}` }, body));
      expect(select.answer.body).toBe('{"success":true,"data":[{"id":2,"name":"two"}]}');
      expect(select.answer.status).toBe(200);
      expect(select.headers).toEqual([...common(`select-${round}`, '100000'), ...jsonType(select.answer.body.length), ...keepAlive]);
    }
  });

  it('POST rows, and a request without an id of its own (a fresh ULID)', async () => {
    const insert = await timed(() => send(server.baseUrl, 'POST', '/api/v1/tables/h/rows', json, JSON.stringify({ rows: [{ id: 3, name: 'three' }] })));
    expect(insert.answer.status).toBe(201);
    const id = insert.headers[0]![1];
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(insert.headers).toEqual([...common(id, '100000'), ...jsonType(insert.answer.body.length), ...keepAlive]);
  });

  it('an error answer (400 INVALID_QUERY) and a missing row (404)', async () => {
    const bad = await timed(() => send(server.baseUrl, 'POST', '/api/v1/query', { ...json, 'x-request-id': 'bad-sql' }, JSON.stringify({ sql: 'SELEC 1' })));
    expect(bad.answer.status).toBe(400);
    expect(bad.headers).toEqual([...common('bad-sql', '100000'), ...jsonType(bad.answer.body.length), ...keepAlive]);
    const missing = await timed(() => send(server.baseUrl, 'GET', '/api/v1/tables/h/rows/99', { ...auth, 'x-request-id': 'missing' }));
    expect(missing.answer.status).toBe(404);
    expect(missing.headers).toEqual([...common('missing', '100000'), ...jsonType(missing.answer.body.length), ...keepAlive]);
  });

  it('a 429 past the limit carries Retry-After besides the block', async () => {
    const statuses: number[] = [];
    let refused: { answer: Answer; headers: [string, string][] } | undefined;
    for (let i = 0; i < 3; i++) {
      refused = await timed(() => send(limited.baseUrl, 'POST', '/api/v1/query', { ...json, 'x-request-id': `n-${i}` }, JSON.stringify({ sql: 'SELECT 1' })));
      statuses.push(refused.answer.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    const [, , , , , ...rest] = refused!.headers;
    expect(refused!.headers.slice(0, 5)).toEqual(common('n-2', '2'));
    expect(rest).toEqual([['retry-after', '<n>'], ...jsonType(refused!.answer.body.length), ...keepAlive]);
  });
});
