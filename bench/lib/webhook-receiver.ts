/**
 * The webhook benchmark's receiver (bench/webhooks.ts), in its own process so that neither the
 * writers of the bench process nor a baseline client share its event loop: node:http on
 * 127.0.0.1, answering 200 as soon as a request's body has arrived, recording per request the
 * arrival time, the event's commit `timestamp` (from the body, without parsing all of it) and, for
 * a baseline request, its `x-bench-sent-at` header (the client's send time, ms).
 *
 * Talks with the bench over IPC:
 *   → {type:'listening', port}                  once listening
 *   ← {type:'phase', name, expect, keep}        counts a new phase (requests to /hook); `keep`
 *                                               keeps each body and its headers
 *   → {type:'reached', figures}                 once `expect` requests of the phase arrived
 *   ← {type:'status'}  → {type:'status', ...}   totals so far
 *   ← {type:'save', file} → {type:'saved', count} writes the kept requests as NDJSON and forgets them
 * Requests to /warmup are answered and not counted (a baseline client's warm-up).
 *
 * Across phases it checks what svcdb promises: each event id once (duplicates counted), and per key
 * increasing sequences (order violations counted).
 */
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Phase {
  name: string;
  expect: number;
  count: number;
  firstAtMs: number;
  lastAtMs: number;
  /** Arrival - the event's commit timestamp (ms); for baseline requests arrival - x-bench-sent-at. */
  latencies: number[];
  bodyBytes: number;
  headerBytes: number;
  duplicates: number;
  orderViolations: number;
  keep: { b: string; h: Record<string, string> }[] | null;
  reported: boolean;
}

export interface ReceiverFigures {
  readonly name: string;
  readonly count: number;
  readonly firstAtMs: number;
  readonly lastAtMs: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
  readonly bodyBytesAvg: number;
  readonly headerBytesAvg: number;
  readonly duplicates: number;
  readonly orderViolations: number;
}

const EVENT_ID = Buffer.from('"event_id":"');
const TIMESTAMP = Buffer.from('"timestamp":"');
const SEQUENCE = Buffer.from('"sequence":');
const KEY = Buffer.from('"key":');
const VALUE = Buffer.from(',"value":');
/** Headers a baseline replays: what svcdb sent, not what node:http or undici add. */
const SENT_HEADERS = ['content-type', 'x-svc-signature', 'x-svc-event-id', 'x-svc-timestamp', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

const seen = new Set<string>();
const lastSequenceOfKey = new Map<string, number>();
let total = 0;
let phase: Phase = fresh('idle', Number.POSITIVE_INFINITY, false);

function fresh(name: string, expect: number, keep: boolean): Phase {
  return {
    name,
    expect,
    count: 0,
    firstAtMs: 0,
    lastAtMs: 0,
    latencies: [],
    bodyBytes: 0,
    headerBytes: 0,
    duplicates: 0,
    orderViolations: 0,
    keep: keep ? [] : null,
    reported: false,
  };
}

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

function figures(p: Phase): ReceiverFigures {
  const sorted = Float64Array.from(p.latencies).sort();
  const round = (v: number | null | undefined): number | null => (v === null || v === undefined ? null : Math.round(v * 10) / 10);
  return {
    name: p.name,
    count: p.count,
    firstAtMs: p.firstAtMs,
    lastAtMs: p.lastAtMs,
    p50Ms: round(percentile(sorted as unknown as number[], 0.5)),
    p99Ms: round(percentile(sorted as unknown as number[], 0.99)),
    maxMs: round(sorted.at(-1)),
    bodyBytesAvg: p.count === 0 ? 0 : Math.round(p.bodyBytes / p.count),
    headerBytesAvg: p.count === 0 ? 0 : Math.round(p.headerBytes / p.count),
    duplicates: p.duplicates,
    orderViolations: p.orderViolations,
  };
}

function textAfter(body: Buffer, field: Buffer, end: number): string | null {
  const at = body.indexOf(field);
  if (at < 0) return null;
  const start = at + field.length;
  const stop = body.indexOf(end, start);
  return body.toString('latin1', start, stop < 0 ? body.length : stop);
}

function record(headers: IncomingHttpHeaders, body: Buffer, atMs: number): void {
  const p = phase;
  total++;
  if (p.count === 0) p.firstAtMs = atMs;
  p.count++;
  p.lastAtMs = atMs;
  p.bodyBytes += body.length;
  const sentAt = headers['x-bench-sent-at'];
  if (typeof sentAt === 'string') {
    p.latencies.push(atMs - Number(sentAt));
  } else {
    const timestamp = textAfter(body, TIMESTAMP, 0x22);
    if (timestamp !== null) p.latencies.push(atMs - Date.parse(timestamp));
    const eventId = textAfter(body, EVENT_ID, 0x22);
    if (eventId !== null) {
      if (seen.has(eventId)) p.duplicates++;
      else seen.add(eventId);
    }
    const sequence = Number(textAfter(body, SEQUENCE, 0x2c));
    const keyAt = body.indexOf(KEY);
    const keyEnd = keyAt < 0 ? -1 : body.indexOf(VALUE, keyAt);
    if (keyAt >= 0 && keyEnd > 0) {
      const key = body.toString('latin1', keyAt + KEY.length, keyEnd);
      const last = lastSequenceOfKey.get(key);
      if (last !== undefined && sequence <= last) p.orderViolations++;
      lastSequenceOfKey.set(key, sequence);
    }
  }
  const kept: Record<string, string> = {};
  for (const name of SENT_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') {
      p.headerBytes += name.length + value.length;
      kept[name] = value;
    }
  }
  p.keep?.push({ b: body.toString('utf8'), h: kept });
  if (!p.reported && p.count >= p.expect) {
    p.reported = true;
    process.send!({ type: 'reached', figures: figures(p) });
  }
}

const OK_HEADERS = { 'content-type': 'text/plain', 'content-length': '2' };

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const atMs = Date.now();
    res.writeHead(200, OK_HEADERS).end('ok');
    if (req.url === '/warmup') return;
    record(req.headers, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), atMs);
  });
});
// Longer than the clients' keep-alive (svcdb's pool: 4 s), so idle gaps between phases close no connection under a request.
server.keepAliveTimeout = 30_000;
server.headersTimeout = 60_000;

process.on('message', (message: { type: string; name?: string; expect?: number; keep?: boolean; file?: string }) => {
  switch (message.type) {
    case 'phase':
      phase = fresh(message.name!, message.expect!, message.keep === true);
      if (phase.expect <= 0) {
        phase.reported = true;
        process.send!({ type: 'reached', figures: figures(phase) });
      }
      break;
    case 'status':
      process.send!({ type: 'status', total, phase: phase.name, phaseCount: phase.count, distinctEvents: seen.size });
      break;
    case 'save': {
      const kept = phase.keep ?? [];
      writeFileSync(message.file!, kept.map((k) => JSON.stringify(k)).join('\n') + '\n');
      phase.keep = null;
      process.send!({ type: 'saved', count: kept.length });
      break;
    }
    default:
      break;
  }
});
process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});

server.listen(0, '127.0.0.1', () => {
  process.send!({ type: 'listening', port: (server.address() as AddressInfo).port });
});
