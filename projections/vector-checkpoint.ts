import { mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SvcError } from '../core/errors.js';
import { DATA_DIR_CREATE_MODE, DATA_FILE_CREATE_MODE } from '../core/file-modes.js';
import type { Lsn } from '../core/units.js';
import type { HnswWorker } from './hnsw-worker-client.js';
import { VectorIndex, type VectorIndexSpec } from './vector-index.js';

/**
 * Vector index checkpoints: per index a graph file (hnswlib's format) and a label map file, named
 * by the LSN they cover, and one manifest naming them. Files are written to *.tmp and renamed; the
 * manifest's rename is the commit point, so a crash leaves the previous checkpoint whole. Files no
 * manifest names are removed after each checkpoint and at load.
 */
const MANIFEST = 'manifest.json';
const FORMAT = 1;

interface ManifestIndex {
  readonly spec: VectorIndexSpec;
  readonly graphFile: string | null;
  readonly labelsFile: string;
  readonly nextLabel: number;
}

interface Manifest {
  readonly format: number;
  readonly lsn: number;
  readonly indexes: readonly ManifestIndex[];
}

export interface LoadedCheckpoint {
  readonly lsn: Lsn;
  readonly indexes: VectorIndex[];
}

/** Reads the last checkpoint in `dir` (none: LSN 0, no indexes); the graphs load in `worker`. */
export async function loadCheckpoint(dir: string, worker: HnswWorker): Promise<LoadedCheckpoint> {
  await mkdir(dir, { recursive: true, mode: DATA_DIR_CREATE_MODE });
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      await removeUnreferenced(dir, new Set());
      return { lsn: 0 as Lsn, indexes: [] };
    }
    throw new SvcError(
      'STORAGE_UNAVAILABLE',
      `the vector checkpoint ${path.join(dir, MANIFEST)} is unreadable; delete the ${dir} directory to rebuild it from the log`,
      { dir },
      error,
    );
  }
  if (manifest.format !== FORMAT)
    throw new SvcError('DATA_DIR_INVALID', `the vector checkpoint in ${dir} has format ${manifest.format}; this build reads ${FORMAT}`, { dir });
  const indexes: VectorIndex[] = [];
  for (const entry of manifest.indexes) {
    const labels = decodeLabels(await readFile(path.join(dir, entry.labelsFile)));
    const graph = entry.graphFile === null ? null : path.join(dir, entry.graphFile);
    indexes.push(await VectorIndex.restore(entry.spec, worker, graph, labels, entry.nextLabel));
  }
  await removeUnreferenced(dir, referenced(manifest));
  return { lsn: manifest.lsn as Lsn, indexes };
}

/** The LSN the last checkpoint in `dir` covers, read without loading it (null: none, or unreadable): for `svcdb inspect`. */
export async function checkpointLsn(dir: string): Promise<Lsn | null> {
  try {
    const manifest = JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
    return typeof manifest.lsn === 'number' ? (manifest.lsn as Lsn) : null;
  } catch {
    return null;
  }
}

/** Writes every index and its labels, then the manifest (the commit point), then removes old files. */
export async function writeCheckpoint(dir: string, lsn: Lsn, indexes: readonly VectorIndex[]): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DATA_DIR_CREATE_MODE });
  const entries: ManifestIndex[] = [];
  for (const index of indexes) {
    const base = `${index.spec.indexId}.${lsn}`;
    const graphFile = `${base}.hnsw`;
    const wrote = await index.write(path.join(dir, `${graphFile}.tmp`));
    if (wrote) await syncThenRename(path.join(dir, `${graphFile}.tmp`), path.join(dir, graphFile));
    const labelsFile = `${base}.labels`;
    await writeFile(path.join(dir, `${labelsFile}.tmp`), encodeLabels(index.labels(), index.size), { mode: DATA_FILE_CREATE_MODE });
    await syncThenRename(path.join(dir, `${labelsFile}.tmp`), path.join(dir, labelsFile));
    entries.push({ spec: index.spec, graphFile: wrote ? graphFile : null, labelsFile, nextLabel: index.labelCounter });
  }
  const manifest: Manifest = { format: FORMAT, lsn, indexes: entries };
  await writeFile(path.join(dir, `${MANIFEST}.tmp`), JSON.stringify(manifest), { mode: DATA_FILE_CREATE_MODE });
  await syncThenRename(path.join(dir, `${MANIFEST}.tmp`), path.join(dir, MANIFEST));
  await fsync(dir);
  await removeUnreferenced(dir, referenced(manifest));
}

/** fsync before rename: after a power loss the manifest never names a file whose data was lost. */
async function syncThenRename(from: string, to: string): Promise<void> {
  await fsync(from);
  await rename(from, to);
}

async function fsync(file: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function referenced(manifest: Manifest): Set<string> {
  const names = new Set<string>([MANIFEST]);
  for (const entry of manifest.indexes) {
    names.add(entry.labelsFile);
    if (entry.graphFile) names.add(entry.graphFile);
  }
  return names;
}

async function removeUnreferenced(dir: string, keep: ReadonlySet<string>): Promise<void> {
  for (const name of await readdir(dir)) {
    if (!keep.has(name)) await rm(path.join(dir, name), { force: true });
  }
}

/** Label map: per entry a float64 label, a uint16 key length and the encoded primary key. */
function encodeLabels(entries: Iterable<[number, Uint8Array]>, count: number): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(4);
  head.writeUInt32BE(count);
  parts.push(head);
  for (const [label, pk] of entries) {
    const h = Buffer.alloc(10);
    h.writeDoubleBE(label, 0);
    h.writeUInt16BE(pk.length, 8);
    parts.push(h, Buffer.from(pk));
  }
  return Buffer.concat(parts);
}

function decodeLabels(buf: Buffer): [number, Uint8Array][] {
  const count = buf.readUInt32BE(0);
  const out: [number, Uint8Array][] = [];
  let pos = 4;
  for (let i = 0; i < count; i++) {
    const label = buf.readDoubleBE(pos);
    const len = buf.readUInt16BE(pos + 8);
    out.push([label, new Uint8Array(buf.subarray(pos + 10, pos + 10 + len))]);
    pos += 10 + len;
  }
  return out;
}
