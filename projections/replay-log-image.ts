/**
 * LevelDB's log format (doc/log_format.md, db/log_writer.cc): what replay writes for LevelDB to
 * read, its write-ahead files (replay-bulk.ts) and a MANIFEST (replay-tables.ts).
 */
import { crc32c } from '@node-rs/crc32';

/** LevelDB log format (db/log_format.h): 32 KiB blocks of fragments, each with a 7-byte header. */
const BLOCK_BYTES = 32 * 1024;
const HEADER_BYTES = 7;
const FULL = 1;
const FIRST = 2;
const MIDDLE = 3;
const LAST = 4;
const MASK_DELTA = 0xa282ead8;
const TYPE_CRCS = [0, FULL, FIRST, MIDDLE, LAST].map((type) => crc32c(Uint8Array.of(type)));

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
export function mask(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}
