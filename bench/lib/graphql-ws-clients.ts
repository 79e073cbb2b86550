/**
 * Subscribers of bench/graphql-subscriptions.ts: one process holding `count` graphql-ws clients
 * (one socket and one live-query subscription each) on `url`, the same for svcdb and the baseline.
 * Each result lists the newest rows `{id, at_ms}`; a row a client sees for the first time is one
 * delivery, its latency = arrival − `at_ms` (the writer's clock just before its write request;
 * same machine, same clock: performance.timeOrigin + performance.now()).
 *
 * IPC with the bench:
 *   → {type:'ready', clients}            every client had its first result (the current one)
 *   → {type:'failed', message}           a client could not connect or subscribe, or its stream ended
 *   ← {type:'measure', fromId}           forget what came so far; count rows with id ≥ fromId
 *   ← {type:'status'} → {type:'status', deliveries}
 *   ← {type:'report'} → {type:'report', deliveries, latencies, perId: [id, clients, maxMs][]}
 *
 * Usage: node graphql-ws-clients.js <ws url> <count> <api key> <query>
 */
import { createRequire } from 'node:module';
import { createClient, type Client } from 'graphql-ws';

const WebSocket = createRequire(import.meta.url)('ws') as unknown;
const [urlArg, countText, apiKeyArg, queryArg] = process.argv.slice(2);
if (!urlArg || !countText || !apiKeyArg || !queryArg) throw new Error('usage: graphql-ws-clients.js <ws url> <count> <api key> <query>');
const url: string = urlArg;
const apiKey: string = apiKeyArg;
const query: string = queryArg;
const count = Number(countText);
const now = (): number => performance.timeOrigin + performance.now();

interface Row {
  readonly id: number | string;
  readonly at_ms: number | string;
}

let fromId = Number.POSITIVE_INFINITY;
let deliveries = 0;
let latencies: number[] = [];
/** Per measured row id: how many clients saw it and the slowest of them. */
let perId = new Map<number, { clients: number; maxMs: number }>();
let ready = 0;
let failed = false;
const clients: Client[] = [];

let closing = false;

function fail(message: string): void {
  if (failed || closing || !process.connected) return;
  failed = true;
  process.send!({ type: 'failed', message });
}

function subscribe(): void {
  let lastId = Number.NEGATIVE_INFINITY;
  let first = true;
  const client = createClient({ url, webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${apiKey}` }, retryAttempts: 0, lazy: true });
  clients.push(client);
  client.subscribe<{ t: Row[] }>(
    { query },
    {
      next(result) {
        const at = now();
        if (result.errors) return fail(`a result with errors: ${JSON.stringify(result.errors).slice(0, 300)}`);
        const rows = result.data?.t ?? [];
        for (const row of rows) {
          const id = Number(row.id);
          if (id <= lastId) continue;
          if (id >= fromId) {
            const ms = at - Number(row.at_ms);
            deliveries++;
            latencies.push(ms);
            const entry = perId.get(id);
            if (entry) {
              entry.clients++;
              if (ms > entry.maxMs) entry.maxMs = ms;
            } else {
              perId.set(id, { clients: 1, maxMs: ms });
            }
          }
        }
        for (const row of rows) lastId = Math.max(lastId, Number(row.id));
        if (first) {
          first = false;
          if (++ready === count) process.send!({ type: 'ready', clients: ready });
        }
      },
      error(error) {
        fail(`subscription failed: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
      },
      complete() {
        fail('a subscription completed (the server ended it)');
      },
    },
  );
}

process.on('message', (message: { type: string; fromId?: number }) => {
  switch (message.type) {
    case 'measure':
      fromId = message.fromId!;
      deliveries = 0;
      latencies = [];
      perId = new Map();
      break;
    case 'status':
      process.send!({ type: 'status', deliveries });
      break;
    case 'report':
      process.send!({ type: 'report', deliveries, latencies, perId: [...perId].map(([id, e]) => [id, e.clients, e.maxMs]) });
      break;
    default:
      break;
  }
});

async function closeAll(): Promise<void> {
  closing = true;
  await Promise.all(clients.map(async (client) => client.dispose()));
  process.exit(0);
}
process.on('disconnect', () => void closeAll());
process.on('SIGTERM', () => void closeAll());

for (let i = 0; i < count; i++) subscribe();
