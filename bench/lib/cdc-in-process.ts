/**
 * The in-process half of bench/cdc.ts: a table gets BENCH_CDC_CHANGES changes through the SQL engine
 * over a real log and projections, then the change events of a CDC capture on it are read back and
 * compared with reading and decoding the same records (no events built). Rounds alternate.
 */
import os from 'node:os';
import { CDC_STREAM_OBJECT, decodeCdcStreamDef } from '../../core/cdc-stream.js';
import { decodeLogRecord } from '../../core/log-records.js';
import { silentLogger } from '../../core/logger.js';
import type { Lsn } from '../../core/units.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { cdcCaptureSpec, changeEvents, projectionEventSource, startOf } from '../../sinks/index.js';
import { jsonEncoder, messageKey } from '../../sinks/cdc/destination.js';
import { openStack, tempDir } from '../../test/helpers/stack.js';
import { median, perS, progress, round2, type BenchResult } from './print-result.js';

const IN_PROCESS_CHANGES = Number(process.env.BENCH_CDC_CHANGES ?? 200_000);
const IN_PROCESS_ROWS_PER_STATEMENT = 10_000;
const IN_PROCESS_ROUNDS = 3;
/** SVC_LOG_READ_BATCH_BYTES_MAX's default. */
const READ_BATCH_BYTES = 4 * 1024 * 1024;

/** Change events from the log vs reading and decoding the same records, in CDC batches of `batchEventsMax` events. */
export async function cdcInProcess(batchEventsMax: number): Promise<BenchResult> {
  const { dir, remove } = await tempDir('svcdb-bench-cdc-');
  try {
    const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024 * 1024, readBatchBytesMax: READ_BATCH_BYTES });
    try {
      const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
      const sql = async (text: string): Promise<void> => {
        await engine.execute(text, { timeoutMs: 600_000, maxRows: 10, tenant: 'default' });
      };
      await sql('CREATE TABLE t (id INT PRIMARY KEY, v TEXT)');
      // No CdcStreams runs here: the statement only records the capture (its LSN and sequence) in the log.
      await sql("CREATE CHANGE DATA CAPTURE ON t TO KAFKA '127.0.0.1:9' TOPIC 'bench' AS bench");
      const rows = Math.floor(IN_PROCESS_CHANGES / 2);
      progress(`in process: ${rows} INSERTs then ${rows} UPDATEs, ${IN_PROCESS_ROWS_PER_STATEMENT} rows a statement`);
      let t0 = performance.now();
      for (let from = 1; from <= rows; from += IN_PROCESS_ROWS_PER_STATEMENT) {
        const to = Math.min(rows, from + IN_PROCESS_ROWS_PER_STATEMENT - 1);
        await sql(`INSERT INTO t SELECT g, 'value-' || g FROM generate_series(${from}, ${to}) g`);
      }
      for (let from = 1; from <= rows; from += IN_PROCESS_ROWS_PER_STATEMENT) {
        const to = Math.min(rows, from + IN_PROCESS_ROWS_PER_STATEMENT - 1);
        await sql(`UPDATE t SET v = v || '-updated' WHERE id BETWEEN ${from} AND ${to}`);
      }
      const loadMs = performance.now() - t0;
      const projections = stack.projections;
      const object = projections.catalog.object(CDC_STREAM_OBJECT, 'default', 'bench');
      if (!object) throw new Error('the capture bench is not in the catalog');
      const def = decodeCdcStreamDef(object.definition);
      const spec = cdcCaptureSpec(object, def);
      const source = projectionEventSource(projections);
      const options = { batchEventsMax, batchBytesMax: READ_BATCH_BYTES, signal: new AbortController().signal, stopAtHead: true };

      const events = async (encode: boolean): Promise<{ count: number; ms: number; bytes: number }> => {
        const started = performance.now();
        let count = 0;
        let bytes = 0;
        for await (const batch of changeEvents(source, spec, startOf(spec), options)) {
          count += batch.length;
          if (encode) for (const e of batch) bytes += jsonEncoder.encode(e).length + (messageKey(e)?.length ?? 0);
        }
        // bytes is returned so the encoding work is used (and cannot be optimized away).
        return { count, ms: performance.now() - started, bytes };
      };
      const decodeOnly = async (): Promise<{ count: number; ms: number }> => {
        const started = performance.now();
        let count = 0;
        for await (const entries of projections.log.read(spec.createdLsn as Lsn, { batchBytesMax: READ_BATCH_BYTES })) {
          for (const entry of entries) {
            const record = decodeLogRecord(entry.payload);
            for (const op of record.ops) if (op.kind === 'row' && op.tableId === spec.tableIds[0]) count++;
          }
        }
        return { count, ms: performance.now() - started };
      };

      const eventMs: number[] = [];
      const encodedMs: number[] = [];
      const baselineMs: number[] = [];
      let eventCount = 0;
      let baselineCount = 0;
      for (let round = 0; round < IN_PROCESS_ROUNDS; round++) {
        // Alternate which goes first, so a burst of load from elsewhere hits both alike.
        const order = round % 2 === 0 ? ['events', 'baseline', 'encoded'] : ['baseline', 'encoded', 'events'];
        for (const what of order) {
          if (what === 'baseline') {
            const r = await decodeOnly();
            baselineMs.push(r.ms);
            baselineCount = r.count;
          } else {
            const r = await events(what === 'encoded');
            (what === 'encoded' ? encodedMs : eventMs).push(r.ms);
            eventCount = r.count;
          }
        }
        progress(
          `in process round ${round + 1}: events ${Math.round(eventMs.at(-1)!)} ms, +JSON ${Math.round(encodedMs.at(-1)!)} ms, decode only ${Math.round(baselineMs.at(-1)!)} ms`,
        );
      }
      if (eventCount !== baselineCount) throw new Error(`${eventCount} events but ${baselineCount} row changes in the log`);
      t0 = median(eventMs);
      const eventsPerS = perS(eventCount, t0);
      const baselinePerS = perS(baselineCount, median(baselineMs));
      return {
        bench: 'cdc-in-process',
        changes: eventCount,
        rowsPerStatement: IN_PROCESS_ROWS_PER_STATEMENT,
        loadChangesPerSec: perS(eventCount, loadMs),
        rounds: IN_PROCESS_ROUNDS,
        eventsPerSec: eventsPerS,
        eventsWithJsonPerSec: perS(eventCount, median(encodedMs)),
        baselineDecodePerSec: baselinePerS,
        ratio: round2(eventsPerS / baselinePerS),
        loadAverage1m: round2(os.loadavg()[0]!),
        note: `median of ${IN_PROCESS_ROUNDS} alternating rounds; changeEvents with stopAtHead, batchEventsMax ${batchEventsMax}, 4 MiB reads; baseline: log.read + decodeLogRecord of the same records`,
      };
    } finally {
      await stack.close();
    }
  } finally {
    await remove();
  }
}
