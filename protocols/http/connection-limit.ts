import type { Server, Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../../core/errors.js';
import type { ConnectionGauge } from './connections.js';
import { closeAfterResponse } from './fastify-base.js';

/**
 * Connections past the limit that are being answered (one 503) at the same time. Past this many,
 * a connection is dropped at accept as node's own `maxConnections` does: answering needs a socket
 * and a parser, and a flood must not get them without bound.
 */
export const REFUSED_CONNECTIONS_MAX = 64;
/** A refused connection that sends no request within this time is closed without an answer. */
export const REFUSED_CONNECTION_IDLE_MS = 5_000;

const OVER_LIMIT = Symbol('svcdb.overConnectionLimit');

type MarkedSocket = Socket & { [OVER_LIMIT]?: true };

/**
 * The spec's max_connections over every API listener (HTTP and HTTPS together). A connection past
 * the limit is kept just long enough to answer its first request with TOO_MANY_CONNECTIONS and is
 * then closed (the onRequest hook of protocols/http/server.ts), instead of node's silent drop.
 */
export class ConnectionLimiter implements ConnectionGauge {
  private open = 0;
  private refusing = 0;

  constructor(readonly connectionsMax: number) {}

  /**
   * Counts the connections of a listener: a plain one at accept ('connection'), a TLS one once the
   * handshake is done ('secureConnection'), which is when a request on it can be answered.
   */
  attach(server: Server, event: 'connection' | 'secureConnection'): void {
    server.maxConnections = this.connectionsMax + REFUSED_CONNECTIONS_MAX;
    server.on(event, (socket: Socket) => this.accepted(socket as MarkedSocket));
  }

  /** True when the request came on a connection accepted past the limit. */
  isRefused(request: FastifyRequest): boolean {
    // For HTTP/2 `raw.socket` is node's proxy of the session's socket; it reads properties through.
    return this.refuses(request.raw.socket);
  }

  /** True when `socket` was accepted past the limit (its requests are answered TOO_MANY_CONNECTIONS). */
  refuses(socket: Socket | undefined | null): boolean {
    return (socket as MarkedSocket | undefined | null)?.[OVER_LIMIT] === true;
  }

  count(): Promise<number> {
    return Promise.resolve(this.open);
  }

  max(): number {
    return this.connectionsMax;
  }

  private accepted(socket: MarkedSocket): void {
    this.open += 1;
    let refused = false;
    socket.once('close', () => {
      this.open -= 1;
      if (refused) this.refusing -= 1;
    });
    if (this.open <= this.connectionsMax) return;
    if (this.refusing >= REFUSED_CONNECTIONS_MAX) {
      socket.destroy();
      return;
    }
    refused = true;
    this.refusing += 1;
    socket[OVER_LIMIT] = true;
    socket.setTimeout(REFUSED_CONNECTION_IDLE_MS, () => socket.destroy());
  }
}

/**
 * Counts the listener's connections against `limiter`. A request on a connection past the limit is
 * answered by connectionRefusal's error (the listener's own onRequest hook asks it, fastify-base.ts).
 */
export function installConnectionLimit(app: FastifyInstance, limiter: ConnectionLimiter, options: { tls: boolean }): void {
  limiter.attach(app.server, options.tls ? 'secureConnection' : 'connection');
}

/**
 * The check of a request against `limiter`: on a connection past the limit, 503 TOO_MANY_CONNECTIONS
 * (and `Retry-After: 1`), the connection closed after the answer; else undefined.
 */
export function connectionRefusal(limiter: ConnectionLimiter): (request: FastifyRequest, reply: FastifyReply) => Error | undefined {
  return (request, reply) => {
    if (!limiter.isRefused(request)) return undefined;
    closeAfterResponse(request, reply);
    reply.header('retry-after', '1');
    return new SvcError(
      'TOO_MANY_CONNECTIONS',
      `the server already has ${limiter.connectionsMax} connections open (SVC_MAX_CONNECTIONS); this connection is closed; retry shortly`,
      { limit: limiter.connectionsMax },
    );
  };
}
