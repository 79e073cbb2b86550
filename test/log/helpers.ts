import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type Logger } from '../../core/logger.js';
import { lsn, type Lsn } from '../../core/units.js';
import type { Log, LogEntry, LogOptions } from '../../log/index.js';

/** A fresh directory under the OS temp dir; remove it with removeTempDir. */
export async function makeTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'svcdb-log-'));
}

export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export function logOptions(dir: string, overrides: Partial<LogOptions> = {}): LogOptions {
  return {
    dir,
    segmentSizeBytesMax: 64 * 1024,
    durability: 'commit',
    fsyncIntervalMs: 5,
    readBatchBytesMax: 16 * 1024,
    indexIntervalBytes: 1024,
    logger: silentLogger,
    ...overrides,
  };
}

/** Every record from fromLsn to the durable head, checking batch bounds on the way. */
export async function readAll(log: Log, fromLsn: number = 1, batchBytesMax?: number): Promise<LogEntry[]> {
  const entries: LogEntry[] = [];
  const options = batchBytesMax === undefined ? {} : { batchBytesMax };
  for await (const batch of log.read(lsn(fromLsn), options)) {
    if (batch.length === 0) throw new Error('read() yielded an empty batch');
    if (batchBytesMax !== undefined && batch.length > 1) {
      const bytes = batch.reduce((sum, e) => sum + e.payload.length, 0);
      if (bytes > batchBytesMax) throw new Error(`batch of ${bytes} bytes exceeds ${batchBytesMax}`);
    }
    entries.push(...batch);
  }
  return entries;
}

/** A payload whose bytes depend on its LSN, so a misplaced record is noticed. */
export function payloadFor(recordLsn: number, sizeBytes: number): Buffer {
  const buf = Buffer.alloc(sizeBytes);
  for (let i = 0; i < sizeBytes; i++) buf[i] = (recordLsn * 31 + i * 7) & 0xff;
  return buf;
}

export async function segmentFiles(dir: string, ext: 'log' | 'idx'): Promise<string[]> {
  return (await readdir(dir)).filter((name) => name.endsWith(`.${ext}`)).sort();
}

/** A logger that keeps warn calls, to check what recovery reports. */
export function recordingLogger(): Logger & { warnings: { obj: Record<string, unknown>; msg: string }[] } {
  const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
  const logger = {
    ...silentLogger,
    warnings,
    warn(obj: object, msg: string) {
      warnings.push({ obj: obj as Record<string, unknown>, msg });
    },
    child() {
      return logger;
    },
  };
  return logger;
}

export function asLsn(value: number): Lsn {
  return lsn(value);
}
