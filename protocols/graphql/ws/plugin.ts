/**
 * GraphQL over WebSocket at /graphql (@fastify/websocket): the subprotocol the client offers picks
 * graphql-transport-ws (graphql-ws) or the legacy subscriptions-transport-ws (`graphql-ws`).
 * Bounded: connections (503 TOO_MANY_CONNECTIONS at the upgrade), operations per connection, and
 * the bytes waiting for a slow client. At shutdown every connection is closed with 1001 and its
 * operations end.
 */
import type { EventEmitter } from 'node:events';
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL } from 'graphql-ws';
import { SvcError } from '../../../core/errors.js';
import type { Logger } from '../../../core/logger.js';
import type { AuthGate } from '../../auth/authenticate.js';
import { LegacyConnection } from './legacy.js';
import type { GraphqlWsLimits } from './limits.js';
import type { SchemaResolver } from './operation.js';
import { BoundedSocket, type RawSocket } from './socket.js';
import { graphqlTransportWs, runningOperations, type TransportDeps, type TransportExtra } from './transport-ws.js';

/** The legacy protocol's subprotocol name (subscriptions-transport-ws). */
export const LEGACY_PROTOCOL = 'graphql-ws';
export { GRAPHQL_TRANSPORT_WS_PROTOCOL };

export interface GraphqlWsDeps {
  readonly gate: AuthGate;
  readonly resolveSchema: SchemaResolver;
  readonly limits: GraphqlWsLimits;
  readonly logger: Logger;
  /** Default /graphql. */
  readonly path?: string;
  /**
   * 'own' (default): the plugin declares GET <path> (a plain GET gets 405 METHOD… as INVALID_QUERY).
   * 'attach': the GraphQL-over-HTTP side declares GET <path> after this plugin; the WebSocket
   * handler is added to that route (one route serves both).
   */
  readonly route?: 'own' | 'attach';
}

/** What the transport holds now (metrics; leak tests). */
export interface GraphqlWsStats {
  readonly connections: number;
  readonly operations: number;
}

interface Connection {
  readonly socket: BoundedSocket;
  readonly extra: TransportExtra;
  readonly legacy: LegacyConnection | null;
}

export interface GraphqlWs {
  /** Register on the API listener (at the root: it is not under /api/v1). */
  readonly plugin: FastifyPluginAsync;
  stats(): GraphqlWsStats;
}

/** Picks the protocol from Sec-WebSocket-Protocol: graphql-transport-ws first, then the legacy one. */
function pickProtocol(protocols: Set<string>): string | false {
  if (protocols.has(GRAPHQL_TRANSPORT_WS_PROTOCOL)) return GRAPHQL_TRANSPORT_WS_PROTOCOL;
  if (protocols.has(LEGACY_PROTOCOL)) return LEGACY_PROTOCOL;
  return false;
}

/** The GraphQL WebSocket transport (register `plugin` on each API listener). */
export function graphqlWebSocket(deps: GraphqlWsDeps): GraphqlWs {
  const path = deps.path ?? '/graphql';
  const limits = deps.limits;
  const logger = deps.logger;
  const connections = new Set<Connection>();
  const transportDeps: TransportDeps = {
    gate: deps.gate,
    resolveSchema: deps.resolveSchema,
    subscriptionsPerConnectionMax: limits.graphqlWsSubscriptionsPerConnectionMax,
    connectionInitTimeoutMs: limits.graphqlWsConnectionInitTimeoutMs,
    onInternalError: (error: unknown) => logger.error({ err: error }, 'graphql-ws: an operation failed'),
  };
  const transport = graphqlTransportWs(transportDeps);

  const refuseOverLimit = async (): Promise<void> => {
    if (connections.size < limits.graphqlWsConnectionsMax) return;
    throw new SvcError('TOO_MANY_CONNECTIONS', `${limits.graphqlWsConnectionsMax} GraphQL WebSocket connections are open (the server's limit)`, {
      limit: limits.graphqlWsConnectionsMax,
    });
  };

  const wsHandler = connectionHandler({ limits, logger, connections, transport, transportDeps });

  const shutdown = async (app: FastifyInstance): Promise<void> => {
    for (const { socket } of connections) socket.close(1001, 'server shutting down');
    (app as unknown as { websocketServer?: { close(): void } }).websocketServer?.close();
  };

  const plugin: FastifyPluginAsync = async (app) => {
    if (deps.route === 'attach') {
      // Before @fastify/websocket's own onRoute hook: it must see the wsHandler on the route.
      app.addHook('onRoute', (route) => {
        const methods = Array.isArray(route.method) ? route.method : [route.method];
        if (route.url === path && methods.includes('GET') && !route.wsHandler) {
          route.wsHandler = wsHandler as unknown as typeof route.wsHandler;
          route.onRequest = [...arrayOf(route.onRequest), overLimitHook(refuseOverLimit)] as typeof route.onRequest;
        }
      });
    }
    await app.register(websocket, {
      options: { maxPayload: limits.graphqlWsMessageBytesMax, handleProtocols: pickProtocol },
      preClose: async function (this: FastifyInstance) {
        await shutdown(this);
      },
    });
    upgradesOnlyAt(app, path);
    if (deps.route !== 'attach') {
      app.route({
        method: 'GET',
        url: path,
        onRequest: overLimitHook(refuseOverLimit),
        handler: async () => {
          throw new SvcError('INVALID_QUERY', `GET ${path} serves GraphQL over WebSocket here: open a WebSocket (graphql-transport-ws or graphql-ws)`, {});
        },
        wsHandler: wsHandler as never,
      });
    }
  };
  // Not encapsulated (as fastify-plugin does): the hooks and the route belong to the listener itself.
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

  return {
    plugin,
    stats() {
      let operations = 0;
      for (const { extra, legacy } of connections) operations += legacy ? legacy.operations.size : runningOperations(extra);
      return { connections: connections.size, operations };
    },
  };
}

interface HandlerParts {
  readonly limits: GraphqlWsLimits;
  readonly logger: Logger;
  readonly connections: Set<Connection>;
  readonly transport: ReturnType<typeof graphqlTransportWs>;
  readonly transportDeps: TransportDeps;
}

/** The @fastify/websocket handler: one connection, in the protocol its subprotocol names, until it closes. */
function connectionHandler(parts: HandlerParts): (raw: unknown, request: FastifyRequest) => void {
  const { limits, logger, connections, transport, transportDeps } = parts;
  return (raw, request) => {
    const socket = new BoundedSocket(raw as RawSocket, { sendBufferBytesMax: limits.graphqlWsSendBufferBytesMax, keepAliveMs: limits.graphqlWsKeepAliveMs });
    if (connections.size >= limits.graphqlWsConnectionsMax) {
      // Upgrades that passed the 503 check together: the one past the limit is closed at once.
      socket.close(1013, 'too many connections: try again later');
      return;
    }
    if (socket.protocol !== GRAPHQL_TRANSPORT_WS_PROTOCOL && socket.protocol !== LEGACY_PROTOCOL) {
      socket.close(4406, `Subprotocol not acceptable: offer ${GRAPHQL_TRANSPORT_WS_PROTOCOL} or ${LEGACY_PROTOCOL}`);
      return;
    }
    const extra: TransportExtra = { socket, headers: request.headers, ip: request.ip, credentials: null, context: null };
    const legacy = socket.protocol === LEGACY_PROTOCOL ? new LegacyConnection(socket, extra, transportDeps) : null;
    const connection: Connection = { socket, extra, legacy };
    connections.add(connection);
    const closed = legacy ? null : transport.open(socket, extra);
    // The legacy protocol starts its keep-alive (ping and `ka`) once acknowledged.
    if (!legacy) socket.keepAlive();
    socket.raw.on('close', (code: number, reason: Buffer) => {
      const done = legacy ? legacy.closed() : closed!(code, reason.toString());
      void done
        .catch((error: unknown) => logger.error({ err: error }, "graphql-ws: ending a connection's operations failed"))
        .finally(() => connections.delete(connection));
    });
  };
}

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/**
 * @fastify/websocket takes every upgrade request of the listener and routes it through fastify,
 * counting on its hooks to run on every route. Registered inside its own context (bin/app.ts: with
 * the GraphQL routes only, so requests to other routes do not run its two hooks and handler
 * wrapper), it would hand an upgrade to another path to a route that does not expect one. So only
 * upgrades to `path` reach it; any other is answered as the plain HTTP request it also is (404 for
 * an unknown path, 401 without a credential, the route's answer otherwise: RFC 6455 §4.1, a reply
 * other than 101 refuses the upgrade), and its connection is closed after that answer.
 */
function upgradesOnlyAt(app: FastifyInstance, path: string): void {
  const server = app.server as unknown as EventEmitter;
  const listeners = server.listeners('upgrade');
  const upgrade = listeners[listeners.length - 1] as UpgradeListener | undefined;
  if (upgrade === undefined) return;
  server.removeListener('upgrade', upgrade);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    if ((query < 0 ? url : url.slice(0, query)) === path) return upgrade(request, socket, head);
    // Node removes its own error listener from an upgraded socket.
    socket.on('error', () => socket.destroy());
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket as Socket);
    response.once('finish', () => socket.end());
    app.routing(request, response);
  });
}

/** The upgrade is refused (503) past the connection limit, before the WebSocket handshake. */
function overLimitHook(check: () => Promise<void>) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.ws) await check();
  };
}

function arrayOf<T>(value: T | readonly T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? [...(value as T[])] : [value as T];
}
