import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { resolveConfig } from '../../core/config.js';

/** A real svcdb server, in this process, on 127.0.0.1 and an ephemeral port, over a temp data dir. */
export interface TestServer {
  /** e.g. http://127.0.0.1:43121 — the REST root is `${baseUrl}/api/v1`. */
  readonly baseUrl: string;
  /** The operations port's root (health, metrics), e.g. http://127.0.0.1:43122; null when it is off. */
  readonly opsUrl: string | null;
  /** The admin API key (send as `Authorization: Bearer …`). */
  readonly apiKey: string;
  readonly dataDir: string;
  /** The server's SQL engine, called in process (no HTTP). */
  readonly sql: ServeHandle['sql'];
  /** The server's webhook service, called in process (no HTTP). */
  readonly webhooks: ServeHandle['webhooks'];
  /** Stops the server and deletes its data directory. Idempotent. */
  close(): Promise<void>;
}

export const TEST_API_KEY = 'test-key';

/**
 * Starts the composition root (bin/app.ts startServer) as `svcdb serve` would, with a silent
 * logger. `env` adds or overrides SVC_* settings (e.g. SVC_LOG_DURABILITY for a benchmark).
 */
export async function startTestServer(options: { env?: Readonly<Record<string, string>>; dataDir?: string; keepDataDir?: boolean } = {}): Promise<TestServer> {
  // A given dataDir restarts a server on its data (the caller removes it); keepDataDir keeps a new one.
  const ownsDir = options.dataDir === undefined && options.keepDataDir !== true;
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'svcdb-sql-')));
  const config = resolveConfig({
    env: {
      SVC_DATA_DIR: dataDir,
      SVC_HTTP_PORT: '0',
      SVC_OPS_PORT: '0',
      SVC_HOST: '127.0.0.1',
      SVC_API_KEY: TEST_API_KEY,
      SVC_LOG_LEVEL: 'warn',
      ...options.env,
    },
  });
  let handle;
  try {
    handle = await startServer(config, pino({ level: 'silent' }));
  } catch (error) {
    if (ownsDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const server = handle;
  let closing: Promise<void> | null = null;
  return {
    baseUrl: server.httpUrl.replace(/\/$/, ''),
    opsUrl: server.opsUrl?.replace(/\/$/, '') ?? null,
    apiKey: TEST_API_KEY,
    dataDir,
    sql: server.sql,
    webhooks: server.webhooks,
    close() {
      closing ??= (async () => {
        try {
          await server.close('test done');
        } finally {
          if (ownsDir) await rm(dataDir, { recursive: true, force: true });
        }
      })();
      return closing;
    },
  };
}
