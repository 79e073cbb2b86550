/**
 * The baseline of bench/graphql-subscriptions.ts, in its own process as svcdb is: a bare `ws`
 * server on 127.0.0.1 that speaks just enough of graphql-transport-ws for the same graphql-ws
 * clients (connection_init → connection_ack, subscribe → the current result at once, ping → pong,
 * complete), and broadcasts. POST /publish with a row `{id, at_ms, note}` adds it to the last
 * `window` rows and sends every subscription the payload svcdb's live query
 * `t(order_by: {id: desc}, limit: window)` would send: `{"id":…,"type":"next","payload":{"data":{"t":[…]}}}`.
 * No parsing of the query, no auth, no database: the cost of pushing the same bytes to the same sockets.
 *
 * Usage: node graphql-ws-broadcast.js <window> <seed rows as JSON>; tells its port over IPC
 * ({type:'listening', port}).
 */
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Socket {
  send(data: string): void;
  on(event: 'message', listener: (data: Buffer) => void): this;
  on(event: 'close', listener: () => void): this;
  close(code?: number): void;
}
interface WsServer {
  on(event: 'connection', listener: (socket: Socket) => void): this;
  clients: Set<Socket>;
}
const { WebSocketServer } = createRequire(import.meta.url)('ws') as {
  WebSocketServer: new (options: {
    server: ReturnType<typeof createServer>;
    path: string;
    handleProtocols?: (protocols: Set<string>) => string | false;
  }) => WsServer;
};

interface Row {
  readonly id: number;
  readonly at_ms: number;
  readonly note: string;
}

const windowSize = Number(process.argv[2] ?? 10);
const rows: Row[] = JSON.parse(process.argv[3] ?? '[]') as Row[];
rows.sort((a, b) => b.id - a.id);
/** Subscription ids per socket (graphql-ws opens one per subscribe). */
const subscriptions = new Map<Socket, Set<string>>();

const payloadOf = (): string => JSON.stringify({ data: { t: rows.slice(0, windowSize) } });
const next = (id: string, payload: string): string => `{"id":${JSON.stringify(id)},"type":"next","payload":${payload}}`;

function onMessage(socket: Socket, data: Buffer): void {
  const message = JSON.parse(data.toString('utf8')) as { type: string; id?: string };
  switch (message.type) {
    case 'connection_init':
      subscriptions.set(socket, new Set());
      socket.send('{"type":"connection_ack"}');
      break;
    case 'ping':
      socket.send('{"type":"pong"}');
      break;
    case 'subscribe':
      subscriptions.get(socket)?.add(message.id!);
      socket.send(next(message.id!, payloadOf()));
      break;
    case 'complete':
      subscriptions.get(socket)?.delete(message.id!);
      break;
    default:
      break;
  }
}

function publish(row: Row): void {
  rows.unshift(row);
  rows.length = Math.min(rows.length, windowSize);
  const payload = payloadOf();
  for (const [socket, ids] of subscriptions) for (const id of ids) socket.send(next(id, payload));
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/publish') {
      publish(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Row);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    } else {
      res.writeHead(404).end();
    }
  });
});
server.keepAliveTimeout = 30_000;
const wss = new WebSocketServer({
  server,
  path: '/graphql',
  handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false),
});
wss.on('connection', (socket) => {
  socket.on('message', (data) => onMessage(socket, data));
  socket.on('close', () => subscriptions.delete(socket));
});

process.on('disconnect', () => process.exit(0));
process.on('SIGTERM', () => {
  for (const socket of wss.clients) socket.close(1001);
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
server.listen(0, '127.0.0.1', () => process.send!({ type: 'listening', port: (server.address() as AddressInfo).port }));
