import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

const ROWS = 1_000_000;
/** Each row is ~130 bytes of NDJSON: held at once, the result would be well over this. */
const HEAP_GROWTH_BYTES_MAX = 96 * 1024 * 1024;

describe('POST /query/stream at 1M rows', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('streams every row with a bounded heap (server and client share this process)', async () => {
    global.gc?.();
    const baseline = process.memoryUsage().heapUsed;
    // Sampled at every chunk the client receives (the event itself), not on a timer a busy event
    // loop may not run: the server produces between chunks, in this same process.
    let peak = baseline;
    let samples = 0;
    const sample = (): void => {
      peak = Math.max(peak, process.memoryUsage().heapUsed);
      samples += 1;
    };
    {
      const response = await fetch(`${server.baseUrl}/api/v1/query/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify({ sql: `SELECT g AS n, repeat('x', 100) AS pad FROM generate_series(1, ${ROWS}) g`, timeout_ms: 120_000 }),
      });
      expect(response.status).toBe(200);
      const decoder = new TextDecoder();
      let lines = 0;
      let tail = '';
      let last = '';
      for await (const chunk of response.body!) {
        sample();
        const text = tail + decoder.decode(chunk, { stream: true });
        const parts = text.split('\n');
        tail = parts.pop()!;
        lines += parts.length;
        if (parts.length > 0) last = parts[parts.length - 1]!;
      }
      expect(tail).toBe('');
      expect(lines).toBe(ROWS);
      expect(JSON.parse(last).n).toBe(ROWS);
    }
    expect(samples).toBeGreaterThan(100);
    expect(peak - baseline).toBeLessThan(HEAP_GROWTH_BYTES_MAX);
  }, 120_000);
});
