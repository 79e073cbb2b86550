import { assert } from '../core/errors.js';
import { KIB, MIB } from '../core/units.js';

/**
 * Every limit of the log layer, in one place. Options that an operator tunes (segment size,
 * durability, index interval) come from config through LogOptions; these are the bounds that keep
 * memory and syscall sizes sane whatever the options say.
 */
export const LOG_LIMITS = Object.freeze({
  /** Largest payload of one record; append() refuses a bigger one with PAYLOAD_TOO_LARGE. */
  recordPayloadBytesMax: 128 * MIB,
  /** Frames are encoded into arena chunks of this size, so a batch is one or two iovecs. */
  writeChunkBytes: 1 * MIB,
  /** A frame bigger than this gets its own buffer instead of a slot in a chunk. */
  writeChunkFrameBytesMax: 256 * KIB,
  /**
   * A batch up to this size is written by the event loop's thread itself (writevSync), a bigger one
   * in the thread pool: a small write costs less than the hop (measured: ~5 against ~30 us of CPU).
   */
  inlineWriteBytesMax: 256 * KIB,
  /** Most bytes written by one writev + fdatasync; appends beyond it wait for the next flush. */
  writeBatchBytesMax: 16 * MIB,
  /**
   * fdatasyncs of written batches in flight at once (group commit): the next batch is written and
   * synced while the previous sync runs; each is acknowledged only after every earlier one.
   */
  syncsInFlightMax: 2,
  /** whenWritable() waits while this many appended bytes are not yet written. */
  appendQueueBytesMax: 64 * MIB,
  /**
   * append() refuses (LIMIT_EXCEEDED) once this many bytes wait: a caller that ignores
   * whenWritable() gets a clear error instead of exhausting memory. An empty queue always accepts.
   */
  appendQueueBytesHardMax: 256 * MIB,
  /** Bytes read from a segment per read syscall (reads and recovery scans parse frames from it). */
  readChunkBytes: 1 * MIB,
  /** Smallest such read: a reader asking for small batches (a point read) does not read 1 MiB. */
  readChunkBytesMin: 64 * KIB,
  /**
   * Bytes of the newest written records kept in memory (log/tail-cache.ts): consumers following the
   * head (the projections a batch behind, CDC) read them without touching the segment file. Counted
   * as the write chunks they lie in (what holding them keeps alive): ~75,000 single-row inserts,
   * under 3 minutes of the mixed load, after which it holds no more. A consumer further behind (or
   * the start of a batch larger than this, which only many concurrent bulk writers make) reads the
   * file just written, from the OS page cache.
   */
  tailCacheBytesMax: 8 * MIB,
  /** Sealed segments whose sparse index stays in memory (least recently used are dropped). */
  sparseIndexCacheCountMax: 16,
});

// Relations between the limits, asserted once at load (TigerBeetle style).
assert(LOG_LIMITS.writeChunkFrameBytesMax <= LOG_LIMITS.writeChunkBytes, 'a chunk holds a small frame');
assert(LOG_LIMITS.writeBatchBytesMax >= LOG_LIMITS.writeChunkBytes, 'a batch holds a chunk');
assert(LOG_LIMITS.inlineWriteBytesMax <= LOG_LIMITS.writeChunkBytes, 'an inline write is small');
assert(LOG_LIMITS.readChunkBytesMin <= LOG_LIMITS.readChunkBytes, 'read chunk bounds are ordered');
assert(LOG_LIMITS.syncsInFlightMax >= 1 && LOG_LIMITS.syncsInFlightMax <= 2, 'one sync descriptor per sync in flight');
assert(LOG_LIMITS.appendQueueBytesMax >= LOG_LIMITS.writeBatchBytesMax, 'the queue holds a batch');
assert(LOG_LIMITS.appendQueueBytesHardMax >= 2 * LOG_LIMITS.appendQueueBytesMax, 'room above the soft bound');
assert(LOG_LIMITS.tailCacheBytesMax >= 4 * LOG_LIMITS.writeChunkBytes, 'the tail cache holds several write chunks');
assert(LOG_LIMITS.recordPayloadBytesMax < 2 ** 32 - 64, 'payload length fits the u32 frame field');
