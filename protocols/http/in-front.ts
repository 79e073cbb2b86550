import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { directHandler, type DirectListener, type DirectRoutes } from './direct/direct-lane.js';
import { inOrder } from './pipelining.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface InFront {
  /** The direct path of the point reads, with its connection-limit check; undefined: none on this listener. */
  readonly direct: { readonly routes: DirectRoutes; refuses(socket: Socket): boolean } | undefined;
  readonly bodyLimitBytes: number;
  readonly logger: FastifyBaseLogger;
  /** close() has begun. */
  readonly closing: () => boolean;
}

/**
 * What runs in front of fastify's request handler on the server fastify made (its own, with all its
 * settings): the handler is taken off the server's 'request' event and put behind, in this order,
 * pipelining.ts's inOrder (a pipelined request that may change something runs in its turn) and, when
 * `direct` is set, the direct path (direct/direct-lane.ts), which calls fastify's handler for every
 * request it does not answer. (The extra servers fastify opens when the host is `localhost`, one per
 * address, keep fastify's handler alone.)
 */
export function inFrontOfFastify(server: Server | { listeners(event: 'request'): unknown[] }, front: InFront): void {
  const http = server as Server;
  const handlers = http.listeners('request') as Handler[];
  if (handlers.length !== 1) throw new Error(`fastify's server has ${handlers.length} request handlers, not one: nothing can go in front of it`);
  const fastify = handlers[0]!;
  const direct = front.direct;
  let first = fastify;
  if (direct !== undefined) {
    const logger = front.logger as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
    const listener: DirectListener = {
      closing: front.closing,
      refuses: (socket) => direct.refuses(socket),
      logsEveryRequest: () => logger.isLevelEnabled?.('debug') !== false,
      // As the onResponse hook of createBaseServer does for fastify's answers.
      afterAnswer: () => {
        if (front.closing()) setImmediate(() => http.closeIdleConnections());
      },
    };
    first = directHandler(direct.routes, listener, front.bodyLimitBytes, fastify);
  }
  http.removeListener('request', fastify);
  http.on('request', inOrder(first));
}
