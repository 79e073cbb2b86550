import { readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fsyncPath } from '../core/fsync.js';
import { lsn, type Lsn } from '../core/units.js';
import type { SparseIndex } from './sparse-index.js';
import type { SegmentInfo } from './types.js';

const SEGMENT_NAME = /^(\d{20})\.log$/;
const INDEX_NAME = /^(\d{20})\.idx$/;

/** 00000000000000000001.log: the base LSN, zero-padded so names sort like LSNs. */
export function segmentFileName(baseLsn: Lsn): string {
  return `${String(baseLsn).padStart(20, '0')}.log`;
}

export function indexFileName(baseLsn: Lsn): string {
  return `${String(baseLsn).padStart(20, '0')}.idx`;
}

/** What the log knows of one segment file. lastLsn and sizeBytes move only for the active one. */
export class Segment {
  readonly fileName: string;
  readonly path: string;
  readonly indexPath: string;
  /** In memory for the active segment always; for sealed ones while in the index cache. */
  index: SparseIndex | null = null;

  constructor(
    readonly dir: string,
    readonly baseLsn: Lsn,
    public lastLsn: Lsn,
    public sizeBytes: number,
  ) {
    this.fileName = segmentFileName(baseLsn);
    this.path = join(dir, this.fileName);
    this.indexPath = join(dir, indexFileName(baseLsn));
  }

  get isEmpty(): boolean {
    return this.lastLsn < this.baseLsn;
  }

  info(): SegmentInfo {
    return { baseLsn: this.baseLsn, lastLsn: this.lastLsn, sizeBytes: this.sizeBytes, path: this.path };
  }
}

export interface SegmentFile {
  readonly baseLsn: Lsn;
  readonly fileName: string;
  readonly path: string;
}

/** Segment files of dir in LSN order, and index files without a segment (left by retention or repair). */
export async function listSegmentFiles(dir: string): Promise<{ segments: SegmentFile[]; orphanIndexes: string[] }> {
  const names = await readdir(dir);
  const bases = new Set<string>();
  const segments: SegmentFile[] = [];
  for (const name of names) {
    const match = SEGMENT_NAME.exec(name);
    if (!match) continue;
    const base = Number(match[1]);
    if (!Number.isSafeInteger(base) || base < 1) continue;
    bases.add(match[1] as string);
    segments.push({ baseLsn: lsn(base), fileName: name, path: join(dir, name) });
  }
  segments.sort((a, b) => a.baseLsn - b.baseLsn);
  const orphanIndexes = names
    .filter((name) => {
      const match = INDEX_NAME.exec(name);
      return match !== null && !bases.has(match[1] as string);
    })
    .map((name) => join(dir, name));
  return { segments, orphanIndexes };
}

/** fsync of the directory: makes a created, renamed or deleted file name durable. */
export function fsyncDirectory(dir: string): Promise<void> {
  return fsyncPath(dir);
}

/** unlink that treats "already gone" as done (retention and repair may be re-run after a crash). */
export async function removeFileIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
