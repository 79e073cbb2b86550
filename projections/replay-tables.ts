/**
 * LevelDB table files and MANIFEST written by replay itself (the formats are LevelDB's documented
 * doc/table_format.md and doc/log_format.md, and db/version_edit.cc's tags, unchanged since 2011;
 * classic-level bundles LevelDB 1.20). Replay used to hand its sorted chunks to LevelDB's recovery
 * (a memtable filled and written as a level-0 table per chunk) and then compact them all once more;
 * both are a rewrite of the whole state on LevelDB's threads. Here the merged state is written once,
 * as non-overlapping tables at the bottom level (6), which LevelDB never compacts further: nothing
 * in level 0, nothing to merge. The choices a later open depends on:
 *  - every entry has sequence number 0 and type "value" (keys are unique, so no order between
 *    versions is needed), and the MANIFEST's last sequence is above every one used, so later writes win;
 *  - blocks are stored uncompressed (type 0 in each block's trailer; LevelDB reads it whatever its
 *    compression option); LevelDB's own compactions later write its usual snappy blocks;
 *  - each table has the bloom filter block the store opens with (replay-filter.ts), as LevelDB's own
 *    tables do: a point read that misses a table probes its filter, not its index and a data block;
 *  - block size and restart interval are LevelDB's defaults, which classic-level keeps (4 KiB, 16).
 */
import { crc32c } from '@node-rs/crc32';
import { open, rename } from 'node:fs/promises';
import path from 'node:path';
import { FILTER_META_KEY, FilterBuilder } from './replay-filter.js';
import { logFileImage, mask } from './replay-log-image.js';
import { writeVarint } from './replay-sort.js';

/** LevelDB's defaults (include/leveldb/options.h), which classic-level passes on unchanged. */
const BLOCK_BYTES = 4096;
const RESTART_INTERVAL = 16;
/** A block's trailer: its compression type (0: none) and the masked CRC-32C of its bytes and that type. */
const TRAILER_BYTES = 5;
/** Sequence 0, type 1 (kTypeValue), as the fixed64 after the user key in an internal key. */
const VALUE_TRAILER = Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0);
const INTERNAL_TRAILER_BYTES = 8;
/** table/format.h: two block handles padded to 40 bytes, then the magic number. */
const FOOTER_HANDLES_BYTES = 40;
const MAGIC_LOW = 0x8b80fb57;
const MAGIC_HIGH = 0xdb477524;
const BOTTOM_LEVEL = 6;
/** db/version_edit.cc tags. */
const TAG_COMPARATOR = 1;
const TAG_LOG_NUMBER = 2;
const TAG_NEXT_FILE_NUMBER = 3;
const TAG_LAST_SEQUENCE = 4;
const TAG_NEW_FILE = 7;
const COMPARATOR = 'leveldb.BytewiseComparator';

/** A table as the MANIFEST names it, and its first and last entries (read back after the open). */
export interface TableMeta {
  readonly number: number;
  readonly size: number;
  /** User keys (without the internal key's 8 bytes). */
  readonly firstKey: Uint8Array;
  readonly firstValue: Uint8Array;
  readonly lastKey: Uint8Array;
  readonly lastValue: Uint8Array;
}

/**
 * Builds one table at a time from entries given in strictly increasing key order (table/table_builder.cc's
 * layout): data blocks of prefix-compressed internal keys with a restart point every 16 keys, each
 * cut at about 4 KiB, then the filter block, a metaindex block naming it, the index block and the footer.
 */
export class TableBuilder {
  private out: Uint8Array;
  private at = 0;
  private blockStart = 0;
  private restarts: number[] = [0];
  private sinceRestart = 0;
  /** The previous internal key (prefix compression, and the index entry of its block). */
  private previous: Uint8Array = new Uint8Array(256);
  private previousLength = 0;
  private index: { key: Uint8Array; offset: number; size: number }[] = [];
  private first: { key: Uint8Array; value: Uint8Array } | null = null;
  /** The last value added: src[lastFrom, +lastLength) (read back after the open). */
  private lastSrc: Uint8Array | null = null;
  private lastFrom = 0;
  private lastLength = 0;
  private readonly filter = new FilterBuilder();
  /** The buffer of the table before the last one finished (its write is done by the next finish()). */
  private spare: Uint8Array | null = null;

  constructor(private readonly tableBytes: number) {
    this.out = new Uint8Array(tableImageBytes(tableBytes));
  }

  /** Entries in the table being built. */
  get empty(): boolean {
    return this.first === null;
  }

  /** True once the table has reached its size: finish() it before adding more. */
  get full(): boolean {
    return this.at >= this.tableBytes;
  }

  /**
   * Adds key src[keyFrom, +keyLength) with value src[valueFrom, +valueLength), after every key added before.
   * sharedHint, when not -1: the bytes this key shares with the one added last (the merge knows them).
   */
  add(src: Uint8Array, keyFrom: number, keyLength: number, valueFrom: number, valueLength: number, sharedHint = -1): void {
    const length = keyLength + INTERNAL_TRAILER_BYTES;
    if (this.previous.length < length) this.previous = grownKey(this.previous, this.previousLength, length);
    const previous = this.previous;
    const previousLength = this.previousLength;
    // The bytes shared with the previous internal key (user key, then the 8-byte trailer), none at a restart point.
    let shared = 0;
    if (this.sinceRestart === RESTART_INTERVAL) {
      this.restarts.push(this.at - this.blockStart);
      this.sinceRestart = 0;
    } else if (sharedHint >= 0 && sharedHint < keyLength && sharedHint < previousLength - INTERNAL_TRAILER_BYTES) {
      // Both user keys go on past the shared bytes and differ there: so do the internal keys.
      shared = sharedHint;
    } else {
      const limit = keyLength < previousLength ? keyLength : previousLength;
      while (shared < limit && previous[shared] === src[keyFrom + shared]) shared += 1;
      if (shared === keyLength) while (shared < previousLength && shared < length && previous[shared] === VALUE_TRAILER[shared - keyLength]) shared += 1;
    }
    // The previous key becomes this one: only the bytes past the shared ones change (the trailer
    // only when the user key's length does: it is the same for every entry).
    for (let i = shared; i < keyLength; i++) previous[i] = src[keyFrom + i]!;
    if (previousLength !== length || shared > keyLength) for (let i = keyLength; i < length; i++) previous[i] = VALUE_TRAILER[i - keyLength]!;
    this.previousLength = length;
    this.filter.addKey(src, keyFrom, keyLength);
    if (this.at + 15 + length - shared + valueLength > this.out.length) this.reserve(15 + length - shared + valueLength);
    // Written through locals (the hot loop of a replay's end: one call per entry).
    const out = this.out;
    let at = this.at;
    if (shared < 0x80) out[at++] = shared;
    else at = writeVarint(out, at, shared);
    const nonShared = length - shared;
    if (nonShared < 0x80) out[at++] = nonShared;
    else at = writeVarint(out, at, nonShared);
    if (valueLength < 0x80) out[at++] = valueLength;
    else at = writeVarint(out, at, valueLength);
    for (let i = shared; i < length; i++) out[at++] = previous[i]!;
    if (valueLength <= 64) for (let i = 0; i < valueLength; i++) out[at++] = src[valueFrom + i]!;
    else {
      out.set(src.subarray(valueFrom, valueFrom + valueLength), at);
      at += valueLength;
    }
    this.at = at;
    this.sinceRestart += 1;
    if (this.first === null) this.first = { key: src.slice(keyFrom, keyFrom + keyLength), value: src.slice(valueFrom, valueFrom + valueLength) };
    this.lastSrc = src;
    this.lastFrom = valueFrom;
    this.lastLength = valueLength;
    if (at - this.blockStart + 4 * this.restarts.length + 4 >= BLOCK_BYTES) this.finishDataBlock();
  }

  /**
   * The table's bytes and what the MANIFEST and the read-back need; the builder starts a new table.
   * The bytes stay valid until the second finish() after this one: two buffers take turns (a table
   * is written while the next is built; a new 8 MiB buffer per table was ~60 MB of allocation per 1M rows).
   */
  finish(number: number): { image: Uint8Array; meta: TableMeta; smallest: Uint8Array; largest: Uint8Array } {
    if (this.first === null || this.lastSrc === null) throw new Error('an empty table');
    if (this.sinceRestart > 0 || this.at > this.blockStart) this.finishDataBlock();
    const largest = this.index[this.index.length - 1]!.key;
    // The filter block is stored raw (table_builder.cc WriteRawBlock: no compression, a trailer).
    const filter = this.filter.finish();
    const filterOffset = this.at;
    this.reserve(filter.length + TRAILER_BYTES);
    this.copy(filter, 0, filter.length);
    this.trailer(filterOffset, filter.length);
    const metaindex = this.writeBlock([FILTER_META_KEY], [handle(filterOffset, filter.length)], 1);
    const index = this.writeBlock(
      this.index.map((entry) => entry.key),
      this.index.map((entry) => handle(entry.offset, entry.size)),
      1,
    );
    const footer = new Uint8Array(FOOTER_HANDLES_BYTES + 8);
    const handles = concat([handle(metaindex.offset, metaindex.size), handle(index.offset, index.size)]);
    footer.set(handles, 0);
    const view = new DataView(footer.buffer);
    view.setUint32(FOOTER_HANDLES_BYTES, MAGIC_LOW, true);
    view.setUint32(FOOTER_HANDLES_BYTES + 4, MAGIC_HIGH, true);
    this.reserve(footer.length);
    this.copy(footer, 0, footer.length);
    const lastValue = this.lastSrc.slice(this.lastFrom, this.lastFrom + this.lastLength);
    const smallest = concat([this.first.key, VALUE_TRAILER]);
    const meta: TableMeta = {
      number,
      size: this.at,
      firstKey: this.first.key,
      firstValue: this.first.value,
      lastKey: largest.slice(0, largest.length - INTERNAL_TRAILER_BYTES),
      lastValue,
    };
    const image = this.out.subarray(0, this.at);
    this.reset();
    return { image, meta, smallest, largest };
  }

  private reset(): void {
    const written = this.out;
    this.out = this.spare ?? new Uint8Array(tableImageBytes(this.tableBytes));
    this.spare = written;
    this.at = 0;
    this.blockStart = 0;
    this.restarts = [0];
    this.sinceRestart = 0;
    this.previousLength = 0;
    this.index = [];
    this.first = null;
    this.lastSrc = null;
  }

  private finishDataBlock(): void {
    for (const restart of this.restarts) this.fixed32(restart);
    this.fixed32(this.restarts.length);
    const offset = this.blockStart;
    const size = this.at - offset;
    this.trailer(offset, size);
    this.index.push({ key: this.previous.slice(0, this.previousLength), offset, size });
    this.blockStart = this.at;
    this.filter.startBlock(this.at);
    this.restarts = [0];
    this.sinceRestart = 0;
    this.previousLength = 0;
  }

  /** A block with a restart point every `interval` entries (the index block: every one), and its trailer. */
  private writeBlock(keys: readonly Uint8Array[], values: readonly Uint8Array[], interval: number): { offset: number; size: number } {
    const offset = this.at;
    const restarts: number[] = [0];
    for (let i = 0; i < keys.length; i++) {
      if (i > 0 && i % interval === 0) restarts.push(this.at - offset);
      const key = keys[i]!;
      const value = values[i]!;
      this.reserve(15 + key.length + value.length);
      this.varint(0);
      this.varint(key.length);
      this.varint(value.length);
      this.copy(key, 0, key.length);
      this.copy(value, 0, value.length);
    }
    this.reserve(4 * restarts.length + 4 + TRAILER_BYTES);
    for (const restart of restarts) this.fixed32(restart);
    this.fixed32(restarts.length);
    const size = this.at - offset;
    this.trailer(offset, size);
    return { offset, size };
  }

  /** Type 0 (uncompressed) and the masked CRC-32C of the block's bytes and that type. */
  private trailer(offset: number, size: number): void {
    this.reserve(TRAILER_BYTES);
    this.out[this.at] = 0;
    const crc = mask(crc32c(this.out.subarray(offset, offset + size + 1)));
    new DataView(this.out.buffer, this.out.byteOffset).setUint32(this.at + 1, crc, true);
    this.at += TRAILER_BYTES;
  }

  private reserve(bytes: number): void {
    if (this.at + bytes <= this.out.length) return;
    const grown = new Uint8Array(Math.max(this.out.length * 2, this.at + bytes));
    grown.set(this.out.subarray(0, this.at));
    this.out = grown;
  }

  private varint(n: number): void {
    const out = this.out;
    while (n >= 0x80) {
      out[this.at++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    out[this.at++] = n;
  }

  private fixed32(n: number): void {
    const out = this.out;
    out[this.at++] = n & 0xff;
    out[this.at++] = (n >>> 8) & 0xff;
    out[this.at++] = (n >>> 16) & 0xff;
    out[this.at++] = n >>> 24;
  }

  private copy(src: Uint8Array, from: number, length: number): void {
    if (length <= 64) {
      const out = this.out;
      for (let i = 0; i < length; i++) out[this.at + i] = src[from + i]!;
    } else this.out.set(src.subarray(from, from + length), this.at);
    this.at += length;
  }
}

/**
 * Room for a table: its data blocks, the last one past the size, and the filter and index blocks
 * after them (a bloom filter is 10 bits a key: up to ~1/16 of the data for short entries; the index
 * a key per 4 KiB block), so that no table grows its buffer (a copy of it) at the end.
 */
function tableImageBytes(tableBytes: number): number {
  return tableBytes + Math.ceil(tableBytes / 8) + 2 * BLOCK_BYTES;
}

/** A larger buffer for an internal key, holding the first `keep` bytes of `key`. */
function grownKey(key: Uint8Array, keep: number, length: number): Uint8Array {
  const grown = new Uint8Array(length * 2);
  grown.set(key.subarray(0, keep));
  return grown;
}

/** A table's file name as LevelDB 1.20 writes it (db/filename.cc). */
export function tableFileName(number: number): string {
  return `${String(number).padStart(6, '0')}.ldb`;
}

/** Writes `bytes` to a new file and fsyncs it. */
export async function writeDurably(file: string, bytes: Uint8Array): Promise<void> {
  const handle = await open(file, 'wx');
  try {
    let at = 0;
    while (at < bytes.length) at += (await handle.write(bytes, at, bytes.length - at)).bytesWritten;
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The tables at level 6 and LevelDB's counters, as the one VersionEdit of a new MANIFEST. */
export interface ManifestContents {
  readonly tables: readonly { readonly number: number; readonly size: number; readonly smallest: Uint8Array; readonly largest: Uint8Array }[];
  /** Write-ahead files numbered below this are not LevelDB's to recover (none is left). */
  readonly logNumber: number;
  readonly nextFileNumber: number;
  readonly lastSequence: number;
}

/** A MANIFEST file's bytes: one VersionEdit record (db/version_edit.cc EncodeTo) in the log format. */
export function manifestImage(contents: ManifestContents): Uint8Array {
  const parts: number[] = [];
  const varint = (n: number): void => {
    while (n >= 0x80) {
      parts.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    parts.push(n);
  };
  const bytes = (b: Uint8Array): void => {
    varint(b.length);
    for (const byte of b) parts.push(byte);
  };
  varint(TAG_COMPARATOR);
  bytes(new TextEncoder().encode(COMPARATOR));
  varint(TAG_LOG_NUMBER);
  varint(contents.logNumber);
  varint(TAG_NEXT_FILE_NUMBER);
  varint(contents.nextFileNumber);
  varint(TAG_LAST_SEQUENCE);
  varint(contents.lastSequence);
  for (const table of contents.tables) {
    varint(TAG_NEW_FILE);
    varint(BOTTOM_LEVEL);
    varint(table.number);
    varint(table.size);
    bytes(table.smallest);
    bytes(table.largest);
  }
  return logFileImage(Uint8Array.from(parts));
}

/** The MANIFEST written and fsynced, then CURRENT naming it (a temporary file renamed over it, as LevelDB does), then the directory. */
export async function installManifest(dir: string, manifestNumber: number, contents: ManifestContents): Promise<void> {
  const name = `MANIFEST-${String(manifestNumber).padStart(6, '0')}`;
  await writeDurably(path.join(dir, name), manifestImage(contents));
  const temporary = path.join(dir, `${String(manifestNumber).padStart(6, '0')}.dbtmp`);
  await writeDurably(temporary, new TextEncoder().encode(`${name}\n`));
  await rename(temporary, path.join(dir, 'CURRENT'));
}

function handle(offset: number, size: number): Uint8Array {
  const parts: number[] = [];
  for (let n of [offset, size]) {
    while (n >= 0x80) {
      parts.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    parts.push(n);
  }
  return Uint8Array.from(parts);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
