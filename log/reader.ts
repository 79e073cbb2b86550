import { open, type FileHandle } from 'node:fs/promises';
import { assert, shuttingDown, type SvcError } from '../core/errors.js';
import { lsn, type Lsn } from '../core/units.js';
import { belowFirstLsn, logCorrupt } from './errors.js';
import { FrameCursor } from './frame-cursor.js';
import { FRAME_HEADER_BYTES, type FrameStatus } from './frame.js';
import { LOG_LIMITS } from './limits.js';
import { describeFrameStatus } from './scan.js';
import type { Segment } from './segment.js';
import type { SparseIndex } from './sparse-index.js';
import type { TailCache } from './tail-cache.js';
import type { LogEntry } from './types.js';

/** What a reader needs from the log; it never writes. */
export interface ReadSource {
  readonly durableLsn: Lsn;
  readonly firstLsn: Lsn;
  readonly closed: boolean;
  /** The segment whose LSN range would hold lsn (the last one with baseLsn <= lsn). */
  segmentFor(recordLsn: Lsn): Segment | undefined;
  /** rebuild: the index file pointed at the wrong record, build it again from the segment. */
  indexFor(segment: Segment, rebuild: boolean): Promise<SparseIndex>;
  /** The newest written records, served from memory (null: always read the files). */
  readonly tail: TailCache | null;
  /** Records served so far from memory and from the files (LogStats). */
  readonly readCounts: { memory: number; files: number };
}

export interface ReadBounds {
  readonly batchBytesMax: number;
  readonly toLsn: Lsn | undefined;
  readonly signal: AbortSignal | undefined;
}

/** A segment file being read: one descriptor, one chunk cursor, the position of the next frame. */
interface OpenSegment {
  readonly segment: Segment;
  readonly fh: FileHandle;
  readonly cursor: FrameCursor;
  positionBytes: number;
  /** The durable head when the buffered bytes were read: frames up to it were complete then. */
  bufferedThroughLsn: number;
}

/**
 * The frame at the reader's position, from buffered bytes ('short': fill first). Bytes for a
 * record past the durable head of the moment they were read may come from a write still in
 * flight: such a record is read again, never parsed from them.
 */
function bufferedFrame(opened: OpenSegment, expected: number): FrameStatus {
  if (expected > opened.bufferedThroughLsn) opened.cursor.invalidate();
  return opened.cursor.frame(opened.positionBytes);
}

async function filledFrame(source: ReadSource, opened: OpenSegment): Promise<FrameStatus> {
  opened.bufferedThroughLsn = source.durableLsn;
  return opened.cursor.frameAt(opened.positionBytes);
}

/**
 * Records from fromLsn on, in batches of at most batchBytesMax payload bytes (at least one record),
 * up to the durable head as it stands when each batch starts; then it ends. The consumer pulls,
 * so nothing is read ahead of it. Every frame's CRC and LSN are checked as it is read.
 */
export async function* readLog(source: ReadSource, fromLsn: Lsn, bounds: ReadBounds): AsyncGenerator<LogEntry[], void, undefined> {
  assert(Number.isSafeInteger(fromLsn) && fromLsn >= 1, 'read() starts at an LSN >= 1');
  assert(bounds.batchBytesMax > 0, 'batchBytesMax is positive');
  let next: number = fromLsn;
  let current: OpenSegment | null = null;
  /** The segment the reader is in: like an open descriptor, retention does not take it away. */
  let held: Segment | null = null;
  // Twice the batch bound, within limits: sequential readers get big reads, point reads small ones.
  const chunkBytes = Math.min(LOG_LIMITS.readChunkBytes, Math.max(LOG_LIMITS.readChunkBytesMin, 2 * bounds.batchBytesMax));
  try {
    for (;;) {
      bounds.signal?.throwIfAborted();
      if (source.closed) throw shuttingDown();
      const hi = Math.min(bounds.toLsn ?? Number.POSITIVE_INFINITY, source.durableLsn);
      if (next > hi) return;
      if (current !== null) held = current.segment;
      const cached = cachedBatch(source, held, next, hi, bounds.batchBytesMax);
      if (cached !== null) {
        // The open file's position is now behind: a later read from the files seeks again.
        await current?.fh.close();
        current = null;
        held = cached.segment;
        next += cached.entries.length;
        source.readCounts.memory += cached.entries.length;
        yield cached.entries;
        continue;
      }
      const batch: LogEntry[] = [];
      let batchBytes = 0;
      let failure: { error: unknown } | null = null; // boxed: a caught value may be anything
      try {
        while (next <= hi) {
          if (current === null || next > current.segment.lastLsn) {
            await current?.fh.close();
            current = null;
            current = await openAt(source, lsn(next), chunkBytes);
          }
          const { cursor } = current;
          let status = bufferedFrame(current, next);
          if (status === 'short') status = await filledFrame(source, current);
          if (status !== 'ok' || cursor.lsn !== next) throw damaged(current, next, status);
          const payloadBytes = cursor.sizeBytes - FRAME_HEADER_BYTES;
          if (batch.length > 0 && batchBytes + payloadBytes > bounds.batchBytesMax) break;
          batch.push({ lsn: lsn(next), payload: cursor.payload() });
          batchBytes += payloadBytes;
          current.positionBytes += cursor.sizeBytes;
          next++;
        }
      } catch (error) {
        // Records read before the error are good: deliver them, then fail on the next pull.
        if (batch.length === 0) throw error;
        failure = { error };
      }
      source.readCounts.files += batch.length;
      if (failure !== null) {
        yield batch;
        throw failure.error;
      }
      yield batch;
    }
  } finally {
    await current?.fh.close();
  }
}

/**
 * Records next..hi held by the tail cache, within batchBytesMax (at least one) and within one
 * segment; null when next is not held. As with the files, a reader may finish the segment it is
 * in after retention deleted it, and gets NOT_FOUND for the next one.
 */
function cachedBatch(
  source: ReadSource,
  held: Segment | null,
  next: number,
  hi: number,
  batchBytesMax: number,
): { entries: LogEntry[]; segment: Segment } | null {
  const tail = source.tail;
  if (tail === null || tail.get(next) === undefined) return null;
  const inHeld = held !== null && held.baseLsn <= next && next <= held.lastLsn;
  const segment = inHeld ? held : next >= source.firstLsn ? source.segmentFor(lsn(next)) : undefined;
  if (segment === undefined) return null; // the files answer: belowFirstLsn
  const entries: LogEntry[] = [];
  let batchBytes = 0;
  const end = Math.min(hi, segment.lastLsn);
  for (let at = next; at <= end; at++) {
    const payload = tail.get(at);
    if (payload === undefined) break;
    if (entries.length > 0 && batchBytes + payload.length > batchBytesMax) break;
    entries.push({ lsn: lsn(at), payload });
    batchBytes += payload.length;
  }
  return entries.length > 0 ? { entries, segment } : null;
}

/** Opens the segment holding recordLsn and positions on it, seeking with the sparse index. */
async function openAt(source: ReadSource, recordLsn: Lsn, chunkBytes: number): Promise<OpenSegment> {
  const segment = source.segmentFor(recordLsn);
  if (segment === undefined || recordLsn < source.firstLsn) throw belowFirstLsn(recordLsn, source.firstLsn);
  let fh: FileHandle;
  try {
    fh = await open(segment.path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (recordLsn < source.firstLsn) throw belowFirstLsn(recordLsn, source.firstLsn);
    throw logCorrupt(segment.fileName, 0, 'the segment file is missing (deleted by something other than retention)');
  }
  try {
    const opened: OpenSegment = {
      segment,
      fh,
      cursor: new FrameCursor(fh, Number.POSITIVE_INFINITY, chunkBytes),
      positionBytes: 0,
      bufferedThroughLsn: source.durableLsn,
    };
    await seek(source, opened, recordLsn);
    return opened;
  } catch (error) {
    await fh.close();
    throw error;
  }
}

async function seek(source: ReadSource, opened: OpenSegment, recordLsn: Lsn): Promise<void> {
  const { segment, cursor } = opened;
  let landing = await landingPoint(source, segment, recordLsn, false);
  let status = await cursor.frameAt(landing.positionBytes);
  if (status !== 'ok' || cursor.lsn !== landing.lsn) {
    // The index file disagrees with its segment: a stale index must never cause a wrong read.
    landing = await landingPoint(source, segment, recordLsn, true);
    status = await cursor.frameAt(landing.positionBytes);
  }
  opened.positionBytes = landing.positionBytes;
  for (let expected = landing.lsn; ; expected++) {
    if (status !== 'ok' || cursor.lsn !== expected) throw damaged(opened, expected, status);
    if (expected === recordLsn) return;
    opened.positionBytes += cursor.sizeBytes;
    status = bufferedFrame(opened, expected + 1);
    if (status === 'short') status = await filledFrame(source, opened);
  }
}

async function landingPoint(source: ReadSource, segment: Segment, recordLsn: Lsn, rebuild: boolean): Promise<{ lsn: number; positionBytes: number }> {
  const index = await source.indexFor(segment, rebuild);
  const at = index.floor(recordLsn);
  if (at < 0) return { lsn: segment.baseLsn, positionBytes: 0 };
  return { lsn: index.lsns[at] as number, positionBytes: index.positions[at] as number };
}

function damaged(opened: OpenSegment, expected: number, status: FrameStatus): SvcError {
  const what =
    status === 'ok'
      ? `a valid record has LSN ${opened.cursor.lsn} where LSN ${expected} was expected`
      : `reading LSN ${expected}: ${describeFrameStatus(status)}`;
  return logCorrupt(opened.segment.fileName, opened.positionBytes, what, { lsn: expected });
}
