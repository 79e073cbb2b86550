import { timingSafeEqual } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Logger } from '../../core/logger.js';
import { apiKeysFile, readApiKeys, sha256Hex, type ApiKeyRecord } from './api-keys.js';

export interface KeyRegistryOptions {
  readonly dataDir: string;
  /** At most one look at the file per this interval: the delay before a new or revoked key counts. */
  readonly checkIntervalMs: number;
  readonly logger: Logger;
}

/**
 * The server's view of the API key file. The file is written by `svcdb keys` while the server
 * runs (the server holds the data directory's LevelDB lock, so the keys cannot live there), and
 * re-read when its inode, size or mtime changed, looked at no more than once per checkIntervalMs.
 */
export class ApiKeyRegistry {
  private byHash = new Map<string, ApiKeyRecord>();
  private stamp = '';
  private checkedAtMs = Number.NEGATIVE_INFINITY;
  private checking: Promise<void> | null = null;
  private readings = 0;

  private constructor(private readonly options: KeyRegistryOptions) {}

  /** Open and read the file now, so a broken file stops the start instead of failing requests. */
  static async open(options: KeyRegistryOptions): Promise<ApiKeyRegistry> {
    const registry = new ApiKeyRegistry(options);
    await registry.reload(Date.now(), true);
    return registry;
  }

  /** Whether refresh(nowMs) would look at the file. */
  due(nowMs: number): boolean {
    return nowMs - this.checkedAtMs >= this.options.checkIntervalMs;
  }

  /**
   * Looks at the file when a look is due (at most once per checkIntervalMs) and re-reads it when it
   * changed; null when no look is due. Callers that cache what lookup() answered compare
   * `generation` after it: it changes whenever the keys in force do.
   */
  refresh(nowMs: number): Promise<void> | null {
    if (!this.due(nowMs)) return null;
    this.checking ??= this.reload(nowMs, false).finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /** Which reading of the file the keys in force come from (a new number for each changed file). */
  get generation(): number {
    return this.readings;
  }

  /** The stored key the presented one hashes to (revoked or not), or null. */
  async lookup(presented: string, nowMs: number): Promise<ApiKeyRecord | null> {
    const due = this.refresh(nowMs);
    if (due !== null) await due;
    return this.find(presented);
  }

  /** lookup() without looking at the file: the keys of the reading in force (`generation`). */
  find(presented: string): ApiKeyRecord | null {
    const hash = sha256Hex(presented);
    const record = this.byHash.get(hash);
    // The map lookup already matched; the constant-time compare keeps the check itself uniform.
    if (record === undefined || !timingSafeEqual(Buffer.from(record.sha256, 'hex'), Buffer.from(hash, 'hex'))) return null;
    return record;
  }

  /** Keys in force (for tests and logs). */
  get size(): number {
    return this.byHash.size;
  }

  private async reload(nowMs: number, strict: boolean): Promise<void> {
    this.checkedAtMs = nowMs;
    const file = apiKeysFile(this.options.dataDir);
    try {
      const info = await stat(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      const stamp = info === null ? 'none' : `${info.ino}:${info.size}:${info.mtimeMs}`;
      if (stamp === this.stamp) return;
      const keys = await readApiKeys(this.options.dataDir);
      this.byHash = new Map(keys.map((k) => [k.sha256, k]));
      this.stamp = stamp;
      this.readings += 1;
      this.options.logger.info({ keys: keys.length, revoked: keys.filter((k) => k.revoked_at !== null).length }, 'api keys loaded');
    } catch (error) {
      if (strict) throw error;
      // A file that cannot be read now keeps the keys last read; the next check tries again.
      this.options.logger.error({ err: error, file }, 'api key file unreadable; keeping the keys last read');
    }
  }
}
