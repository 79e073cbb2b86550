import type { SqlEngine } from '../query/index.js';
import type { WebhookApi } from '../sinks/index.js';
import type { Logger as PinoLogger } from 'pino';
import type { Config } from '../core/config.js';
import type { DataDirModeSetting } from '../core/file-modes.js';
import type { ModeScan } from '../projections/index.js';

/**
 * What the CLI (bin/svcdb.ts) needs from the composition root (bin/app.ts).
 * The composition root is the one place that builds and connects the parts.
 */
export interface ServeHandle {
  /** e.g. http://127.0.0.1:8080 */
  readonly httpUrl: string;
  /** e.g. https://127.0.0.1:443; null when TLS is not configured (no SVC_TLS_CERT / SVC_TLS_KEY). */
  readonly httpsUrl: string | null;
  /** null when the ops port is off. */
  readonly opsUrl: string | null;
  /** The vector protocol's own listener (SVC_VECTOR_PORT set and not the HTTP port); null: it is served on httpUrl. */
  readonly vectorUrl?: string | null;
  /** The admin API key generated on this first start (print it once), or null. */
  readonly generatedApiKey: string | null;
  /** The SQL engine, for callers in the same process (benchmarks, embedding): no HTTP in between. */
  readonly sql: SqlEngine;
  /** The webhook service, for callers in the same process: the same definitions as POST /api/v1/webhooks. */
  readonly webhooks: WebhookApi;
  /** Graceful: stop accepting, finish in-flight requests and writes, fsync, close. Idempotent. */
  close(reason: string): Promise<void>;
}

export interface ReplayProgress {
  readonly recordsDone: number;
  readonly recordsTotal: number;
  /** Row changes applied so far (absent: not counted). */
  readonly rowsDone?: number;
}

export interface ReplayReport {
  readonly records: number;
  readonly elapsedMs: number;
}

export interface InspectReport {
  readonly dataDir: string;
  readonly segments: readonly { file: string; baseLsn: number; lastLsn: number; sizeBytes: number }[];
  readonly firstLsn: number;
  readonly lastLsn: number;
  readonly consumers: readonly { name: string; offsetLsn: number }[];
  readonly tables: number;
  /** True when a running server holds the projection store: consumers and tables are unknown. */
  readonly storeLocked: boolean;
  /** Permissions: the data directory's mode, and what group or others could reach beyond the dataDirMode setting. */
  readonly modes: ModeScan & { readonly allowed: DataDirModeSetting };
}

export interface AppCommands {
  /** Every command takes the CLI's root pino logger (the one logger of the process). */
  startServer(config: Config, rootLogger: PinoLogger): Promise<ServeHandle>;
  replay(config: Config, onProgress: (progress: ReplayProgress) => void, rootLogger: PinoLogger): Promise<ReplayReport>;
  inspect(config: Config, rootLogger: PinoLogger): Promise<InspectReport>;
  /** Truncates the log at the first corrupt record (after a LOG_CORRUPT error); returns bytes cut. */
  repair(config: Config, rootLogger: PinoLogger): Promise<{ bytesTruncated: number; segment: string | null }>;
}
