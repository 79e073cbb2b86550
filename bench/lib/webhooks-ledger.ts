/**
 * The first half of bench/webhooks.ts: the exactly-once ledger's cost per delivery, in process
 * (DeliveryLedger.put/get on a real state store against plain classic-level puts of the same bytes).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { keys, openStateStore, STORE_OPTIONS } from '../../projections/index.js';
import { eventId } from '../../sinks/events/change-event.js';
import { DeliveryLedger, type LedgerEntry } from '../../sinks/webhooks/ledger.js';
import { median, progress, round2, type BenchResult } from './print-result.js';

const LEDGER_PUTS = Number(process.env.BENCH_WH_LEDGER_PUTS ?? 50_000);
const LEDGER_ROUNDS = 3;
const LEDGER_IN_FLIGHT = 100;

/** The ledger's cost per delivery: µs per put (one at a time and 100 in flight) and per miss, against raw classic-level. */
export async function ledgerCost(): Promise<BenchResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'svcdb-bench-wh-ledger-'));
  const store = await openStateStore(path.join(dir, 'ledger'));
  const raw = new ClassicLevel<Uint8Array, Uint8Array>(path.join(dir, 'raw'), STORE_OPTIONS);
  await raw.open();
  try {
    const ledger = new DeliveryLedger(store);
    const webhookId = '01JDBENCHWEBHOOK0000000000';
    const tenant = 'default';
    let nextSequence = 1_000_000n;
    const baseMicros = BigInt(Date.now()) * 1000n;
    /** `count` entries as the runner records a delivery, with fresh event ids. */
    const entries = (count: number): LedgerEntry[] =>
      Array.from({ length: count }, () => {
        const sequence = nextSequence++;
        const now = Date.now();
        return {
          event_id: eventId(tenant, sequence, baseMicros + sequence),
          sequence: Number(sequence),
          status: 'delivered',
          attempts: 1,
          errors: [],
          last_status: 200,
          updated_at: new Date(now).toISOString(),
          written_at_ms: now,
        };
      });
    // The raw side writes the very bytes the ledger writes (its key layout and JSON), prepared beforehand.
    const rawOps = (list: readonly LedgerEntry[]): { key: Uint8Array; value: Uint8Array }[] =>
      list.map((entry) => ({
        key: keys.sinkStateKey(`wh/${webhookId}/e/${entry.event_id}`),
        value: Buffer.from(JSON.stringify(entry)),
      }));
    const sample = rawOps(entries(1))[0]!;

    const timed = async <T>(items: readonly T[], inFlight: number, op: (item: T) => Promise<unknown> | unknown): Promise<number> => {
      const started = performance.now();
      if (inFlight === 1) {
        for (const item of items) await op(item);
      } else {
        let next = 0;
        await Promise.all(
          Array.from({ length: inFlight }, async () => {
            while (next < items.length) await op(items[next++]!);
          }),
        );
      }
      return ((performance.now() - started) * 1000) / items.length;
    };

    const figures: Record<string, number[]> = {
      ledgerPut: [],
      rawPut: [],
      rawBatch: [],
      ledgerPutConcurrent: [],
      rawPutConcurrent: [],
      rawBatchConcurrent: [],
      ledgerGetMiss: [],
      rawGetMiss: [],
    };
    // Warm-up: both stores get some writes and reads first.
    const warm = entries(5000);
    await timed(warm, 1, (e) => ledger.put(webhookId, e));
    const warmRaw = rawOps(entries(5000));
    await timed(warmRaw, 1, (o) => raw.put(o.key, o.value));
    for (let round = 0; round < LEDGER_ROUNDS; round++) {
      const sides = round % 2 === 0 ? ['ledger', 'raw'] : ['raw', 'ledger'];
      for (const side of sides) {
        const sequential = entries(LEDGER_PUTS);
        const concurrent = entries(LEDGER_PUTS);
        const missing = entries(LEDGER_PUTS);
        if (side === 'ledger') {
          figures.ledgerPut!.push(await timed(sequential, 1, (e) => ledger.put(webhookId, e)));
          figures.ledgerPutConcurrent!.push(await timed(concurrent, LEDGER_IN_FLIGHT, (e) => ledger.put(webhookId, e)));
          figures.ledgerGetMiss!.push(await timed(missing, 1, (e) => ledger.get(webhookId, e.event_id)));
        } else {
          const seqOps = rawOps(sequential);
          const concOps = rawOps(concurrent);
          const missKeys = rawOps(missing).map((o) => o.key);
          const batchOps = rawOps(entries(LEDGER_PUTS));
          const batchConcOps = rawOps(entries(LEDGER_PUTS));
          figures.rawPut!.push(await timed(seqOps, 1, (o) => raw.put(o.key, o.value)));
          figures.rawPutConcurrent!.push(await timed(concOps, LEDGER_IN_FLIGHT, (o) => raw.put(o.key, o.value)));
          // What the ledger does minus its JSON: a one-op batch of prepared bytes.
          figures.rawBatch!.push(await timed(batchOps, 1, (o) => raw.batch([{ type: 'put', key: o.key, value: o.value }])));
          figures.rawBatchConcurrent!.push(await timed(batchConcOps, LEDGER_IN_FLIGHT, (o) => raw.batch([{ type: 'put', key: o.key, value: o.value }])));
          figures.rawGetMiss!.push(await timed(missKeys, 1, (k) => raw.getSync(k)));
        }
      }
      progress(
        `ledger round ${round + 1}: ${Object.entries(figures)
          .map(([k, v]) => `${k} ${v.at(-1)!.toFixed(2)} µs`)
          .join(', ')}`,
      );
    }
    const us = (name: string): number => round2(median(figures[name]!));
    return {
      bench: 'webhooks-ledger',
      puts: LEDGER_PUTS,
      rounds: LEDGER_ROUNDS,
      keyBytes: sample.key.length,
      valueBytes: sample.value.length,
      ledgerPutUs: us('ledgerPut'),
      rawPutUs: us('rawPut'),
      putRatio: round2(us('ledgerPut') / us('rawPut')),
      rawOneOpBatchUs: us('rawBatch'),
      ledgerPutConcurrentUs: us('ledgerPutConcurrent'),
      rawPutConcurrentUs: us('rawPutConcurrent'),
      putConcurrentRatio: round2(us('ledgerPutConcurrent') / us('rawPutConcurrent')),
      rawOneOpBatchConcurrentUs: us('rawBatchConcurrent'),
      ledgerGetMissUs: us('ledgerGetMiss'),
      rawGetSyncMissUs: us('rawGetMiss'),
      loadAverage1m: round2(os.loadavg()[0]!),
      note:
        `median of ${LEDGER_ROUNDS} alternating rounds, µs per operation (wall time / count); put: one at a time and ${LEDGER_IN_FLIGHT} in flight; ` +
        'ledger: DeliveryLedger.put (JSON with a bigint replacer + a one-op LevelDB batch, not fsynced) over openStateStore; raw: classic-level put of the same key and value bytes, STORE_OPTIONS (rawOneOpBatch: the ledger write minus its JSON, a one-op batch of the same bytes); get: an id not in the store (the check before each delivery)',
    };
  } finally {
    await store.close();
    await raw.close();
    await rm(dir, { recursive: true, force: true });
  }
}
