/**
 * The end of a replay that bulk-loaded chunks: the scratch store is replaced by tables replay
 * writes itself (replay-tables.ts) from the chunks' sorted runs and what the store holds, instead
 * of LevelDB recovering each chunk into a level-0 table and compacting them all once more. Only
 * the scratch store (nothing reads it before the swap; a crash leaves it to be removed at the next
 * start, as before).
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../core/errors.js';
import { fsyncPath } from '../core/fsync.js';
import { compareBytes, RunMerger, type SortedRun } from './replay-merge.js';
import { TAG_DEL, TAG_PUT, writeVarint } from './replay-sort.js';
import { installManifest, TableBuilder, tableFileName, writeDurably, type TableMeta } from './replay-tables.js';
import type { BulkHost } from './state-store.js';

/**
 * Replaces the store's files with tables holding its state after `runs` (oldest first, all newer
 * than what the store holds), then opens it again and reads back each table's first and last
 * entry (a table LevelDB cannot read fails the replay). Returns the tables written.
 */
export async function replaceWithTables(
  host: BulkHost,
  runs: readonly SortedRun[],
  options: {
    readonly tableBytes: number;
    readonly stagingDir: string;
    /** Past this many bytes of the store's entries nothing is done (null returned): the caller takes LevelDB's recovery instead. */
    readonly storeBytesMax: number;
    readonly helper?: TablesHelper;
    readonly splitBytesMin?: number;
  },
): Promise<number | null> {
  const stored = await storeRun(host, options.storeBytesMax);
  if (stored === null) return null;
  const all = [stored, ...runs];
  const total = all.reduce((sum, run) => sum + run.end - run.from, 0);
  // The upper part of the key space goes to another thread (runs split at one key: a key is never in both).
  const split = options.helper !== undefined && total >= (options.splitBytesMin ?? SPLIT_BYTES_MIN) ? splitRuns(all) : null;
  const tables: WrittenTable[] = [];
  await host.closedFor(async () => {
    const dir = host.location;
    const old = await readdir(dir);
    const first = highestFileNumber(old) + 1;
    const upper =
      split === null
        ? Promise.resolve([])
        : options.helper!({ runs: split.upper, dir, firstNumber: first + HELPER_NUMBER_GAP, tableBytes: options.tableBytes });
    // Awaited below; a failure of the lower part must not leave it unhandled.
    upper.catch(() => undefined);
    tables.push(...(await writeTables(split?.lower ?? all, dir, first, options.tableBytes)));
    tables.push(...(await upper));
    const manifest = tables.reduce((highest, table) => Math.max(highest, table.meta.number), first) + 1;
    // Write-ahead files below the log number are not recovered: the old store's are below it (and deleted next).
    const contents = { logNumber: manifest + 1, nextFileNumber: manifest + 2, lastSequence: host.sequence + 1, tables: tables.map(manifestEntry) };
    await installManifest(dir, manifest, contents);
    await fsyncPath(dir);
    // The old files once CURRENT names the new MANIFEST (LevelDB would delete them at the open too).
    for (const name of old) if (/^(?:MANIFEST-\d+|\d+\.(?:log|ldb|sst))$/.test(name)) await rm(path.join(dir, name), { force: true });
    await rm(path.join(dir, options.stagingDir), { recursive: true, force: true });
    await fsyncPath(dir);
  });
  for (const { meta } of tables) checkTable(host, meta);
  return tables.length;
}

/** A table LevelDB cannot open or read (footer, index, its first and last block) fails the replay. */
function checkTable(host: BulkHost, meta: TableMeta): void {
  let cause: unknown = null;
  try {
    if (sameBytes(host.getSync(meta.firstKey), meta.firstValue) && sameBytes(host.getSync(meta.lastKey), meta.lastValue)) return;
  } catch (error) {
    cause = error;
  }
  throw new SvcError(
    'STORAGE_UNAVAILABLE',
    `LevelDB at ${host.location} did not read back table ${meta.number} written by the replay`,
    { location: host.location },
    cause ?? undefined,
  );
}

function manifestEntry(table: WrittenTable) {
  return { number: table.meta.number, size: table.meta.size, smallest: table.smallest, largest: table.largest };
}

/** Written by another thread: the runs' upper key range as tables numbered from firstNumber. */
export type TablesHelper = (part: TablesPart) => Promise<WrittenTable[]>;

export interface TablesPart {
  readonly runs: readonly SortedRun[];
  readonly dir: string;
  readonly firstNumber: number;
  readonly tableBytes: number;
}

export interface WrittenTable {
  readonly meta: TableMeta;
  readonly smallest: Uint8Array;
  readonly largest: Uint8Array;
}

/** Below this many bytes of runs, one thread writes every table (a split costs a copy and a message). */
const SPLIT_BYTES_MIN = 8 * 1024 * 1024;
/** The helper's tables are numbered this far above the first: more tables than one thread writes. */
const HELPER_NUMBER_GAP = 1_000_000;

/**
 * Tables of the runs' merged entries (oldest run first), numbered from `firstNumber`, each written
 * and fsynced in `dir` while the next is built. Also what the helper thread runs (replay-worker.ts).
 */
export async function writeTables(runs: readonly SortedRun[], dir: string, firstNumber: number, tableBytes: number): Promise<WrittenTable[]> {
  const merger = new RunMerger(runs);
  const builder = new TableBuilder(tableBytes);
  const tables: WrittenTable[] = [];
  let number = firstNumber;
  let writing: Promise<void> = Promise.resolve();
  try {
    for (let more = true; more;) {
      more = merger.fill(builder);
      if (builder.empty) break;
      const { image, meta, smallest, largest } = builder.finish(number++);
      tables.push({ meta, smallest, largest });
      await writing;
      writing = writeDurably(path.join(dir, tableFileName(meta.number)), image);
    }
  } finally {
    await writing.catch(() => undefined);
  }
  await writing;
  return tables;
}

/**
 * The runs cut at the middle key of the largest: the lower parts stay (views), the upper parts are
 * copied into buffers of their own (to be transferred to the helper thread).
 */
function splitRuns(runs: readonly SortedRun[]): { lower: SortedRun[]; upper: SortedRun[] } {
  const largest = runs.reduce((a, b) => (b.end - b.from > a.end - a.from ? b : a));
  const entry: Entry = { keyAt: 0, keyLength: 0, next: 0 };
  readEntry(largest.buf, middleEntry(largest, entry), entry);
  const key = largest.buf.slice(entry.keyAt, entry.keyAt + entry.keyLength);
  const lower: SortedRun[] = [];
  const upper: SortedRun[] = [];
  for (const run of runs) {
    let at = run.from;
    while (at < run.end) {
      readEntry(run.buf, at, entry);
      if (compareBytes(run.buf, entry.keyAt, entry.keyLength, key, 0, key.length) >= 0) break;
      at = entry.next;
    }
    lower.push({ buf: run.buf, from: run.from, end: at });
    if (at < run.end) upper.push({ buf: run.buf.slice(at, run.end), from: 0, end: run.end - at });
  }
  return { lower, upper };
}

/** Where the run's middle entry starts: by count, not bytes (a table's cost is mostly per entry; rows and index entries differ in size). */
function middleEntry(run: SortedRun, entry: Entry): number {
  let count = 0;
  for (let at = run.from; at < run.end; count++) at = readEntry(run.buf, at, entry).next;
  let at = run.from;
  for (let i = 0; i < count >>> 1; i++) at = readEntry(run.buf, at, entry).next;
  return at;
}

/** An entry's key and where the next entry starts (one object reused along a walk: millions of entries). */
interface Entry {
  keyAt: number;
  keyLength: number;
  next: number;
}

/** Reads the entry at `at` into `entry`; returns it. */
function readEntry(buf: Uint8Array, at: number, entry: Entry): Entry {
  const tag = buf[at++]!;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = buf[at++]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) break;
  }
  entry.keyAt = at;
  entry.keyLength = length;
  at += length;
  if (tag !== TAG_DEL) {
    length = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = buf[at++]!;
      length += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) break;
    }
    at += length;
  }
  entry.next = at;
  return entry;
}

/** What the store holds (written by ordinary batches and earlier ingests), as the oldest run; null past `bytesMax`. */
async function storeRun(host: BulkHost, bytesMax: number): Promise<SortedRun | null> {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for await (const batch of host.entries({ batchSize: 10_000 })) {
    for (const [key, value] of batch) {
      // The parts and their copy into one buffer are both alive at the end: twice the bytes.
      if (2 * (bytes + key.length + value.length) > bytesMax) return null;
      const entry = new Uint8Array(11 + key.length + value.length);
      let at = 0;
      entry[at++] = TAG_PUT;
      at = writeVarint(entry, at, key.length);
      entry.set(key, at);
      at = writeVarint(entry, at + key.length, value.length);
      entry.set(value, at);
      parts.push(entry.subarray(0, at + value.length));
      bytes += at + value.length;
    }
  }
  const buf = new Uint8Array(bytes);
  let at = 0;
  for (const part of parts) {
    buf.set(part, at);
    at += part.length;
  }
  return { buf, from: 0, end: bytes };
}

function highestFileNumber(names: readonly string[]): number {
  let highest = 0;
  for (const name of names) {
    const match = /^(?:MANIFEST-)?(\d+)(?:\.\w+)?$/.exec(name);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest;
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && a.length === b.length && Buffer.compare(a, b) === 0;
}
