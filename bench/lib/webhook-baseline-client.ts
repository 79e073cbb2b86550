/**
 * The webhook benchmark's baseline (bench/webhooks.ts), in its own process as svcdb's sender is:
 * a bare undici Pool to the receiver, with the pool options of svcdb's EndpointClient
 * (sinks/webhooks/http-client.ts: `connections`, no pipelining, 4 s keep-alive, no h2), POSTing
 * the bodies and headers svcdb sent (an NDJSON file of {b, h} the receiver kept), `inFlight`
 * requests at a time, each answer's body dropped. No signing, no ledger, no order: only HTTP.
 * Each request carries `x-bench-sent-at` (ms) for the receiver's latency. First `warmup` requests
 * go to /warmup (answered, not counted).
 *
 * Usage: node webhook-baseline-client.js <url of /hook> <file> <connections> <inFlight> <warmup>
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, file, connectionsText, inFlightText, warmupText] = process.argv.slice(2);
if (!url || !file) throw new Error('usage: webhook-baseline-client.js <url> <file> <connections> <inFlight> <warmup>');
const connections = Number(connectionsText ?? 10);
const inFlight = Number(inFlightText ?? 100);
const warmup = Number(warmupText ?? 0);

const requests = readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => {
    const { b, h } = JSON.parse(line) as { b: string; h: Record<string, string> };
    return { body: Buffer.from(b, 'utf8'), headers: h };
  });
if (requests.length === 0) throw new Error(`${file}: no requests`);

const target = new URL(url);
const pool = new Pool(target.origin, {
  connections,
  pipelining: 1,
  keepAliveTimeout: 4000,
  keepAliveMaxTimeout: 4000,
  allowH2: false,
  strictContentLength: true,
});

async function post(path: string, request: { body: Buffer; headers: Record<string, string> }): Promise<void> {
  const res = await pool.request({ method: 'POST', path, headers: { ...request.headers, 'x-bench-sent-at': String(Date.now()) }, body: request.body });
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`the receiver answered ${res.statusCode}`);
  await res.body.dump();
}

async function run(path: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(inFlight, count) }, async () => {
      while (next < count) {
        const i = next++;
        await post(path, requests[i % requests.length]!);
      }
    }),
  );
}

await run('/warmup', warmup);
await run(target.pathname, requests.length);
await pool.close();
