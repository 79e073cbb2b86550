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
import { RunMerger, type SortedRun } from './replay-merge.js';
import { TAG_PUT } from './replay-sort.js';
import { installManifest, TableBuilder, tableFileName, writeDurably, type TableMeta } from './replay-tables.js';
import type { BulkHost } from './state-store.js';

/**
 * Replaces the store's files with tables holding its state after `runs` (oldest first, all newer
 * than what the store holds), then opens it again and reads back each table's first and last
 * entry (a table LevelDB cannot read fails the replay). Returns the tables written.
 */
export async function replaceWithTables(host: BulkHost, runs: readonly SortedRun[], tableBytes: number, stagingDir: string): Promise<number> {
  const stored = await storeRun(host);
  const merger = new RunMerger([stored, ...runs]);
  const tables: { meta: TableMeta; smallest: Uint8Array; largest: Uint8Array }[] = [];
  await host.closedFor(async () => {
    const dir = host.location;
    const old = await readdir(dir);
    let number = highestFileNumber(old) + 1;
    const builder = new TableBuilder(tableBytes);
    // The next table is built while the last one is written and fsynced.
    let writing: Promise<void> = Promise.resolve();
    try {
      for (let more = true; more;) {
        more = merger.fill(builder);
        if (builder.empty) break;
        const table = builder.finish(number++);
        tables.push(table);
        await writing;
        writing = writeDurably(path.join(dir, tableFileName(table.meta.number)), table.image);
      }
    } finally {
      await writing.catch(() => undefined);
    }
    await writing;
    const manifest = number;
    // Write-ahead files below the log number are not recovered: the old store's are below it (and deleted next).
    const contents = { logNumber: manifest + 1, nextFileNumber: manifest + 2, lastSequence: host.sequence + 1, tables: tables.map(manifestEntry) };
    await installManifest(dir, manifest, contents);
    await fsyncPath(dir);
    // The old files once CURRENT names the new MANIFEST (LevelDB would delete them at the open too).
    for (const name of old) if (/^(?:MANIFEST-\d+|\d+\.(?:log|ldb|sst))$/.test(name)) await rm(path.join(dir, name), { force: true });
    await rm(path.join(dir, stagingDir), { recursive: true, force: true });
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

function manifestEntry(table: { meta: TableMeta; smallest: Uint8Array; largest: Uint8Array }) {
  return { number: table.meta.number, size: table.meta.size, smallest: table.smallest, largest: table.largest };
}

/** What the store holds (written by ordinary batches and earlier ingests), as the oldest run. */
async function storeRun(host: BulkHost): Promise<SortedRun> {
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for await (const batch of host.entries({ batchSize: 10_000 })) {
    for (const [key, value] of batch) {
      const entry = new Uint8Array(11 + key.length + value.length);
      let at = 0;
      entry[at++] = TAG_PUT;
      at = varint(entry, at, key.length);
      entry.set(key, at);
      at = varint(entry, at + key.length, value.length);
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

function varint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[at++] = n;
  return at;
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
