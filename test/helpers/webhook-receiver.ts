/**
 * A real webhook receiver for tests: node:http on 127.0.0.1 and an ephemeral port, recording
 * every request (headers, the exact body bytes, arrival time) and answering as `respond` says.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly atMs: number;
  /** The status the receiver answered. */
  readonly status: number;
}

/** Decides the answer to a request: a status, and optionally a delay before it (ms). */
export type Respond = (request: {
  readonly body: Buffer;
  readonly headers: IncomingHttpHeaders;
  readonly index: number;
}) => { readonly status: number; readonly delayMs?: number } | Promise<{ readonly status: number; readonly delayMs?: number }>;

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Replaces the answering rule. */
  respond: Respond;
  /** Bodies parsed as JSON, of the requests answered 2xx. */
  accepted(): any[];
  /** Resolves once `predicate` holds over what was received (polls; fails after timeoutMs). */
  until(predicate: (received: readonly Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Respond = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  let index = 0;
  const state = { respond };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void (async () => {
        const answer = await state.respond({ body, headers: req.headers, index: index++ });
        if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
        received.push({ headers: req.headers, body, atMs: Date.now(), status: answer.status });
        res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.status < 300 ? 'ok' : 'no');
      })();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    get respond() {
      return state.respond;
    },
    set respond(next: Respond) {
      state.respond = next;
    },
    accepted: () => received.filter((r) => r.status < 300).map((r) => JSON.parse(r.body.toString('utf8'))),
    async until(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests received)`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
