import http from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { agentCall, agentOk, busyWriters } from './api-calls.js';
import { startTestServer, type TestServer } from './sql-server.js';

/** Clients inserting into the table `busy` all along. */
const BUSY_WRITERS = 16;

/** A test server kept busy, and the two connections a read-after-ack test writes and reads over. */
export interface BusyServer {
  /** One keep-alive connection: the write a test checks goes over it. */
  readonly writer: http.Agent;
  /** Another: the read sent once that write is answered. */
  readonly reader: http.Agent;
  /** agentCall over `agent`: status and parsed body. */
  readonly request: (agent: http.Agent, method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;
  /** agentOk over `agent`: the body of a 2xx answer, else a throw. */
  readonly ok: (agent: http.Agent, method: string, path: string, body?: unknown) => Promise<any>;
}

/**
 * For a describe of read-after-ack tests (test/http/read-after-ack.test.ts, stats-after-ack.test.ts):
 * its beforeAll starts a server (with `env`), runs the `setup` statements over the writer's
 * connection, creates the table `busy` (id INT PRIMARY KEY, v INT NOT NULL) and sets sixteen
 * clients inserting into it all along, over connections of their own, so that the group commit and
 * the apply are busy around every write a test checks (an acknowledged record is often not applied
 * yet when the read arrives); its afterAll stops them, closes every connection and the server.
 */
export function busyServer(options: { readonly env?: Readonly<Record<string, string>>; readonly setup: readonly string[] }): BusyServer {
  let started: TestServer | undefined;
  const server = (): TestServer => {
    if (started === undefined) throw new Error('busyServer: the server starts in beforeAll');
    return started;
  };
  const writer = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const reader = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const noise = new http.Agent({ keepAlive: true, maxSockets: BUSY_WRITERS });
  const request = (agent: http.Agent, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> =>
    agentCall(server(), agent, method, path, body);
  const ok = (agent: http.Agent, method: string, path: string, body?: unknown): Promise<any> => agentOk(server(), agent, method, path, body);
  let stopWriters: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    started = await startTestServer(options.env === undefined ? {} : { env: options.env });
    for (const sql of [...options.setup, 'CREATE TABLE busy (id INT PRIMARY KEY, v INT NOT NULL)']) await ok(writer, 'POST', '/api/v1/query', { sql });
    stopWriters = busyWriters(started, noise, 'busy', BUSY_WRITERS);
  });
  afterAll(async () => {
    await stopWriters();
    writer.destroy();
    reader.destroy();
    noise.destroy();
    await started?.close();
  });
  return { writer, reader, request, ok };
}
