import { readFile, open, writeFile } from 'node:fs/promises';
import { crc32c } from '@node-rs/crc32';
import { DATA_FILE_CREATE_MODE } from '../core/file-modes.js';
import { readU64, writeU64 } from './frame.js';

/**
 * The sparse offset index of one segment: lsn -> file position of that record's frame, one entry
 * per indexIntervalBytes. Only a shortcut for seeking: readers verify the LSN of the frame they land
 * on, and the file carries its segment's size and a CRC, so a stale or damaged index is rebuilt
 * from the segment rather than trusted.
 *
 * File (little-endian): header of INDEX_HEADER_BYTES, then entryCount x (lsn u64 | position u64).
 *   magic u32 | version u32 | headerCrc u32 (over bytes 12..44) | baseLsn u64 | lastLsn u64 |
 *   segmentSizeBytes u64 | entryCount u32 | entriesCrc u32
 */
export const INDEX_HEADER_BYTES = 44;
const INDEX_MAGIC = 0x78696c73; // "slix"
const INDEX_VERSION = 1;
const ENTRY_BYTES = 16;

export class SparseIndex {
  readonly lsns: number[] = [];
  readonly positions: number[] = [];
  private lastPositionBytes = Number.NEGATIVE_INFINITY;

  constructor(private readonly intervalBytes: number) {}

  get entryCount(): number {
    return this.lsns.length;
  }

  /** Adds an entry when the record at position is at least intervalBytes past the last entry. */
  maybeAdd(lsn: number, positionBytes: number): void {
    if (positionBytes - this.lastPositionBytes < this.intervalBytes) return;
    this.add(lsn, positionBytes);
  }

  add(lsn: number, positionBytes: number): void {
    this.lsns.push(lsn);
    this.positions.push(positionBytes);
    this.lastPositionBytes = positionBytes;
  }

  /** Index of the last entry whose lsn <= lsn, or -1. */
  floor(lsn: number): number {
    let lo = 0;
    let hi = this.lsns.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.lsns[mid] as number) <= lsn) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }
}

export interface IndexHeader {
  readonly baseLsn: number;
  readonly lastLsn: number;
  readonly segmentSizeBytes: number;
  readonly entryCount: number;
  readonly entriesCrc: number;
}

export function encodeIndexFile(index: SparseIndex, header: Omit<IndexHeader, 'entryCount' | 'entriesCrc'>): Buffer {
  const buf = Buffer.alloc(INDEX_HEADER_BYTES + index.entryCount * ENTRY_BYTES);
  for (let i = 0; i < index.entryCount; i++) {
    const at = INDEX_HEADER_BYTES + i * ENTRY_BYTES;
    writeU64(buf, at, index.lsns[i] as number);
    writeU64(buf, at + 8, index.positions[i] as number);
  }
  buf.writeUInt32LE(INDEX_MAGIC, 0);
  buf.writeUInt32LE(INDEX_VERSION, 4);
  writeU64(buf, 12, header.baseLsn);
  writeU64(buf, 20, header.lastLsn);
  writeU64(buf, 28, header.segmentSizeBytes);
  buf.writeUInt32LE(index.entryCount, 36);
  buf.writeUInt32LE(crc32c(buf.subarray(INDEX_HEADER_BYTES)) >>> 0, 40);
  buf.writeUInt32LE(crc32c(buf.subarray(12, INDEX_HEADER_BYTES)) >>> 0, 8);
  return buf;
}

/** The header if magic, version and CRC hold; null otherwise (the index is then rebuilt). */
export function decodeIndexHeader(buf: Buffer): IndexHeader | null {
  if (buf.length < INDEX_HEADER_BYTES) return null;
  if (buf.readUInt32LE(0) !== INDEX_MAGIC || buf.readUInt32LE(4) !== INDEX_VERSION) return null;
  if (crc32c(buf.subarray(12, INDEX_HEADER_BYTES)) >>> 0 !== buf.readUInt32LE(8)) return null;
  return {
    baseLsn: readU64(buf, 12),
    lastLsn: readU64(buf, 20),
    segmentSizeBytes: readU64(buf, 28),
    entryCount: buf.readUInt32LE(36),
    entriesCrc: buf.readUInt32LE(40),
  };
}

/** The entries, or null when the file does not match its header (then it is rebuilt). */
export function decodeIndexEntries(buf: Buffer, header: IndexHeader, intervalBytes: number): SparseIndex | null {
  const body = buf.subarray(INDEX_HEADER_BYTES);
  if (body.length !== header.entryCount * ENTRY_BYTES) return null;
  if (crc32c(body) >>> 0 !== header.entriesCrc) return null;
  const index = new SparseIndex(intervalBytes);
  for (let at = 0; at < body.length; at += ENTRY_BYTES) index.add(readU64(body, at), readU64(body, at + 8));
  return index;
}

/** Does this header describe the segment as it is now (same base, same size)? */
export function indexMatches(header: IndexHeader | null, baseLsn: number, segmentSizeBytes: number): header is IndexHeader {
  return header !== null && header.baseLsn === baseLsn && header.segmentSizeBytes === segmentSizeBytes;
}

/** Reads just the header (open checks every sealed segment this way, without loading entries). */
export async function readIndexHeader(path: string): Promise<IndexHeader | null> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const buf = Buffer.alloc(INDEX_HEADER_BYTES);
    const { bytesRead } = await fh.read(buf, 0, INDEX_HEADER_BYTES, 0);
    return decodeIndexHeader(buf.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

/** Loads the whole index if it still describes the segment; null when missing, stale or damaged. */
export async function loadIndexFile(path: string, baseLsn: number, segmentSizeBytes: number, intervalBytes: number): Promise<SparseIndex | null> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const header = decodeIndexHeader(buf);
  if (!indexMatches(header, baseLsn, segmentSizeBytes)) return null;
  return decodeIndexEntries(buf, header, intervalBytes);
}

/**
 * Writes the index file. Not fsynced: it is a cache of the segment, and a torn or lost index is
 * detected by its CRC and size and rebuilt.
 */
export async function writeIndexFile(path: string, index: SparseIndex, header: Omit<IndexHeader, 'entryCount' | 'entriesCrc'>): Promise<void> {
  await writeFile(path, encodeIndexFile(index, header), { mode: DATA_FILE_CREATE_MODE });
}
