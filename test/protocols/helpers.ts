import { Writable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { pino } from 'pino';
import { resolveConfig, type Config } from '../../core/config.js';
import { createHttpServer } from '../../protocols/http/server.js';
import type { EngineStatus } from '../../protocols/http/types.js';
import { listen } from '../../protocols/listen.js';

/** A test double of the engine: plain flags the test flips. */
/**
 * A status object for the protocol-level tests of the HTTP layer (listen, TLS, routing); what the
 * health paths report from the real engine is tested as wired in health-wiring.test.ts.
 */
export class FakeEngineStatus implements EngineStatus {
  readonly version = '7.0.0';
  readonly replicaCount = 0;
  ready = true;
  storageOk = true;
  storeOk = true;
  stalled = false;
  constructor(readonly startedAtMs: number = Date.now() - 5_000) {}
  isReady(): boolean {
    return this.ready;
  }
  storageHealthy(): boolean {
    return this.storageOk;
  }
  storeHealthy(): boolean {
    return this.storeOk;
  }
  projectionStalled(): boolean {
    return this.stalled;
  }
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** A real pino logger writing JSON lines into an array. */
export function captureLogger(level = 'debug'): { logger: pino.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

export function testConfig(flags: Record<string, string> = {}): Config {
  return resolveConfig({ flags: { host: '127.0.0.1', port: '0', 'ops-port': '0', ...flags }, env: {} });
}

export interface Running {
  readonly app: FastifyInstance;
  readonly url: string;
  readonly lines: LogLine[];
  readonly status: FakeEngineStatus;
  close(): Promise<void>;
}

/** createHttpServer on 127.0.0.1 and an ephemeral port. */
export async function startHttp(options: { flags?: Record<string, string>; plugins?: FastifyPluginAsync[] } = {}): Promise<Running> {
  const { logger, lines } = captureLogger();
  const status = new FakeEngineStatus();
  const config = testConfig(options.flags);
  const app = createHttpServer({ config, logger, status, plugins: options.plugins ?? [] });
  const url = await listen(app, { host: config.host, port: config.httpPort, settingName: 'SVC_HTTP_PORT / --port' });
  return { app, url, lines, status, close: () => app.close() };
}

/** fetch + JSON body. */
export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}
