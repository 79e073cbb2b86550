/**
 * The change-event consumer's view of the projections: the log, table definitions by LSN, the
 * rows a snapshot copied, and a local offset per stream in the state store (a key of its own,
 * like every consumer's offset; sinks write no table).
 */
import type { Lsn } from '../../core/units.js';
import { keys, type AppliedTracker, type Projections, type StateStore } from '../../projections/index.js';
import type { OffsetStore } from '../cdc/stream-runner.js';
import type { EventSourceDeps } from './event-source.js';

export function projectionEventSource(projections: Projections): EventSourceDeps {
  return {
    log: projections.log,
    tableDefAt: (tableId, lsn) => projections.tables.tableDefAt(tableId, lsn as Lsn),
    waitTablesApplied: (lsn, signal) => appliedOrStopped(projections.tablesApplied, lsn as Lsn, signal),
    snapshotRows: (createdLsn, skip) => snapshotRows(projections.store, createdLsn, skip),
  };
}

async function* snapshotRows(store: StateStore, createdLsn: number, skip: bigint): AsyncIterable<Uint8Array[]> {
  let left = skip;
  for await (const batch of store.entries({ ...keys.snapshotRange(createdLsn), batchSize: 1024 })) {
    if (left >= BigInt(batch.length)) {
      left -= BigInt(batch.length);
      continue;
    }
    const from = Number(left);
    left = 0n;
    yield batch.slice(from).map(([, image]) => image);
  }
}

/**
 * Resolves once `lsn` is applied; rejects once `signal` aborts (the stream stops) or the tracker fails.
 * waitWithin, not waitFor raced with the signal: a waitFor's waiter stays in the tracker until its LSN
 * is applied, and a stream that stops while waiting for the next record (again and again, as a
 * restarted or paused stream does) would leave one behind each time.
 */
async function appliedOrStopped(tracker: AppliedTracker, lsn: Lsn, signal: AbortSignal): Promise<void> {
  // A stopped stream stops here even when the LSN is applied (as it always has). No deadline
  // (Infinity: no timer): waitWithin answers false only when the signal aborted, its waiter gone then.
  if (signal.aborted || !(await tracker.waitWithin(lsn, Infinity, signal))) throw new Error('stopped while waiting for the tables projection');
}

/** Local stream offsets: sink state `cdc-offset:<stream id>` -> JSON {lsn, afterSequence} (kept across replay). */
export function storeOffsets(store: StateStore): OffsetStore {
  const keyOf = (streamId: string): Uint8Array => keys.sinkStateKey(`cdc-offset:${streamId}`);
  return {
    async get(streamId) {
      const bytes = await store.get(keyOf(streamId));
      if (!bytes) return null;
      const raw = JSON.parse(Buffer.from(bytes).toString('utf8')) as { lsn: number; afterSequence: string };
      return { lsn: raw.lsn, afterSequence: BigInt(raw.afterSequence) };
    },
    async put(streamId, position) {
      const value = Buffer.from(JSON.stringify({ lsn: position.lsn, afterSequence: position.afterSequence.toString() }));
      await store.write([{ type: 'put', key: keyOf(streamId), value }]);
    },
    async delete(streamId) {
      await store.write([{ type: 'del', key: keyOf(streamId) }]);
    },
  };
}
