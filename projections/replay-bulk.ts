/**
 * Replay's bulk load into a FRESH LevelDB (the rebuild's scratch store). Handing LevelDB a chunk's
 * ops through the binding costs one Node-API call per key on the main thread (two million per
 * million rows with one index: the largest cost left in replay). LevelDB's own recovery does the
 * same inserts in C++: at open it reads every write-ahead file (*.log) numbered at or above the
 * current one and applies the WriteBatch records in it (the file format is LevelDB's documented
 * doc/log_format.md, unchanged since 2011). So replay writes each chunk as such a file beside the
 * open database and reopens it when the rows must become visible: before a record the main thread
 * applies itself (a catalog change may read them), before an ordinary batch, past a size bound
 * (LevelDB puts every table recovery writes in level 0: the bound keeps that pile small), and at
 * the end. Two invariants make the files safe to add while the database is open:
 *  - file numbers far above any LevelDB has given out (it never deletes a *.log numbered at or
 *    above its current one, and marks ours used when it recovers them);
 *  - sequence numbers above every one LevelDB has used: the store counts the ops it has written
 *    (an upper bound: a fresh database starts at 0 and each op takes one), so a bulk-loaded op is
 *    newer than every earlier write of its key, as its place in the log says.
 * The other side of the second: an ordinary write made between append() and ingest() takes a
 * sequence number BELOW the pending files' and loses to them at the ingest, for any key they hold.
 * replay-apply.ts ingests before every ordinary chunk, and what it writes in between (the handoff's
 * meta keys) is never in a bulk file; keep it so (the review of session 5 showed the loss).
 */
import { crc32c } from '@node-rs/crc32';
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../core/errors.js';
import { PACKED_PUT } from './state-store.js';

/** LevelDB log format (db/log_format.h): 32 KiB blocks of fragments, each with a 7-byte header. */
const BLOCK_BYTES = 32 * 1024;
const HEADER_BYTES = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;
/** WriteBatch entry tags (db/dbformat.h kTypeDeletion, kTypeValue). */
const TAG_DEL = 0;
const TAG_PUT = 1;
/** WriteBatch header: fixed64 sequence, fixed32 count. */
const BATCH_HEADER_BYTES = 12;
/** Above the highest file number in the directory: more files than LevelDB creates between two reopens. */
const FILE_NUMBER_GAP = 1_000_000;
/** Between the counted sequence and a bulk batch's: a margin, the count being an upper bound already. */
const SEQUENCE_GAP = 1024;
const MASK_DELTA = 0xa282ead8;
const TYPE_CRCS = [0, FULL, FIRST, MIDDLE, LAST].map((type) => crc32c(Uint8Array.of(type)));

const packedLength = (ops: Uint8Array, at: number): number => ((ops[at]! << 24) | (ops[at + 1]! << 16) | (ops[at + 2]! << 8) | ops[at + 3]!) >>> 0;

/** What the bulk loader needs from the store it loads. */
export interface BulkHost {
  readonly location: string;
  /** An upper bound of the highest sequence number LevelDB has used. */
  sequence: number;
  /** Closes and opens the database: LevelDB recovers the files written since. */
  reopen(): Promise<void>;
  readonly getSync: (key: Uint8Array) => Uint8Array | undefined;
}

/** Writes packed ops as LevelDB write-ahead files and has LevelDB recover them (see the file's doc). */
export class BulkLoader {
  private nextFile = 0;
  private lastFile = 0;
  private pendingBytes = 0;
  /** The last put of the last file: after an ingest LevelDB must hold it (it skips a record it cannot read). */
  private probe: { key: Uint8Array; value: Uint8Array } | null = null;

  constructor(
    private readonly host: BulkHost,
    private readonly pendingBytesMax: number,
  ) {}

  /** True when ops were written that LevelDB has not read yet. */
  get pending(): boolean {
    return this.pendingBytes > 0;
  }

  /** Adds packed ops (state-store.ts PACKED_PUT) as one atomic batch, visible after the next ingest(). */
  async append(ops: Uint8Array): Promise<void> {
    if (ops.length === 0) return;
    if (this.nextFile === 0) this.nextFile = (await this.highestFileNumber()) + FILE_NUMBER_GAP;
    const first = this.host.sequence + 1 + SEQUENCE_GAP;
    const { rep, count, lastPut } = writeBatchRep(ops, first);
    this.host.sequence = first + count - 1;
    const image = logFileImage(rep);
    this.lastFile = this.nextFile++;
    await writeFile(path.join(this.host.location, `${String(this.lastFile).padStart(6, '0')}.log`), image);
    this.pendingBytes += image.length;
    this.probe = lastPut < 0 ? null : packedPut(ops, lastPut);
    if (this.pendingBytes >= this.pendingBytesMax) await this.ingest();
  }

  /** Makes every appended batch visible (LevelDB recovers them into its tables). */
  async ingest(): Promise<void> {
    if (this.pendingBytes === 0) return;
    await this.host.reopen();
    this.pendingBytes = 0;
    this.nextFile = 0;
    const probe = this.probe;
    this.probe = null;
    const found = probe === null ? undefined : this.host.getSync(probe.key);
    if (probe !== null && (found === undefined || Buffer.compare(found, probe.value) !== 0)) {
      throw new SvcError('STORAGE_UNAVAILABLE', `LevelDB at ${this.host.location} did not recover a bulk-loaded batch of the replay`, {
        location: this.host.location,
      });
    }
  }

  private async highestFileNumber(): Promise<number> {
    let highest = this.lastFile;
    for (const name of await readdir(this.host.location)) {
      const match = /^(?:MANIFEST-)?(\d+)(?:\.\w+)?$/.exec(name);
      if (match) highest = Math.max(highest, Number(match[1]));
    }
    return highest;
  }
}

/** Packed ops as a LevelDB WriteBatch (db/write_batch.cc rep) numbered from `sequence`, and its entry count. */
export function writeBatchRep(ops: Uint8Array, sequence: number): { rep: Uint8Array; count: number; lastPut: number } {
  // Each packed op has 4-byte lengths where the batch has varints of at most 5 bytes: never longer.
  const rep = new Uint8Array(BATCH_HEADER_BYTES + ops.length);
  let at = BATCH_HEADER_BYTES;
  let count = 0;
  let from = 0;
  let lastPut = -1;
  while (from < ops.length) {
    const put = ops[from] === PACKED_PUT;
    if (put) lastPut = from;
    const keyLength = packedLength(ops, from + 1);
    rep[at++] = put ? TAG_PUT : TAG_DEL;
    at = copyWithVarint(rep, at, ops, from + 5, keyLength);
    from += 5 + keyLength;
    if (put) {
      const valueLength = packedLength(ops, from);
      at = copyWithVarint(rep, at, ops, from + 4, valueLength);
      from += 4 + valueLength;
    }
    count += 1;
  }
  const view = new DataView(rep.buffer);
  view.setUint32(0, sequence % 2 ** 32, true);
  view.setUint32(4, Math.floor(sequence / 2 ** 32), true);
  view.setUint32(8, count, true);
  return { rep: rep.subarray(0, at), count, lastPut };
}

/** The key and value of the packed put at `at`, copied. */
function packedPut(ops: Uint8Array, at: number): { key: Uint8Array; value: Uint8Array } {
  const keyLength = packedLength(ops, at + 1);
  const valueAt = at + 5 + keyLength;
  return { key: ops.slice(at + 5, valueAt), value: ops.slice(valueAt + 4, valueAt + 4 + packedLength(ops, valueAt)) };
}

/** A varint32 length then the bytes ops[from, from + length), at `at` in out; returns the end. */
function copyWithVarint(out: Uint8Array, at: number, ops: Uint8Array, from: number, length: number): number {
  let n = length;
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  if (length <= 32) for (let i = 0; i < length; i++) out[at + i] = ops[from + i]!;
  else out.set(ops.subarray(from, from + length), at);
  return at + length;
}

/** One record (a WriteBatch rep) as a whole LevelDB log file, split in fragments as db/log_writer.cc splits it. */
export function logFileImage(record: Uint8Array): Uint8Array {
  // Room for every fragment's header and each block's padding (under a header's size).
  const out = new Uint8Array(record.length + 2 * HEADER_BYTES * (Math.ceil(record.length / (BLOCK_BYTES - 2 * HEADER_BYTES)) + 2));
  const view = new DataView(out.buffer);
  let at = 0;
  let from = 0;
  let blockLeft = BLOCK_BYTES;
  let first = true;
  for (;;) {
    // Fewer bytes than a header left in a block: zeros, and the next fragment starts a new block.
    if (blockLeft < HEADER_BYTES) {
      at += blockLeft;
      blockLeft = BLOCK_BYTES;
    }
    const length = Math.min(blockLeft - HEADER_BYTES, record.length - from);
    const last = from + length === record.length;
    const type = first ? (last ? FULL : FIRST) : last ? LAST : MIDDLE;
    const data = record.subarray(from, from + length);
    out.set(data, at + HEADER_BYTES);
    view.setUint32(at, mask(crc32c(data, TYPE_CRCS[type])), true);
    view.setUint16(at + 4, length, true);
    out[at + 6] = type;
    at += HEADER_BYTES + length;
    blockLeft -= HEADER_BYTES + length;
    from += length;
    first = false;
    if (last) return out.subarray(0, at);
  }
}

/** LevelDB stores masked CRCs (util/crc32c.h Mask): a CRC of data holding CRCs stays strong. */
function mask(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}
