import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * HTTP/1.1 pipelining, in order: node runs every request of a connection as soon as it is parsed
 * and only queues the responses, so a client pipelining `INSERT` then `SELECT` of that row had the
 * SELECT run beside the INSERT, before its write was acknowledged (it did not see the row). RFC 9112
 * §9.3.2 lets a server process pipelined requests in parallel only when they all have safe methods.
 *
 * inOrder(handler) runs a request at once unless it is pipelined behind a response not yet sent
 * (node gives that response no socket until its turn) and it, or a request before it still
 * unanswered, may change something (a method other than GET, HEAD, OPTIONS, TRACE): then it runs
 * when its turn comes ('socket' on its response: every request before it has been answered).
 * Pipelined reads still run side by side; a request that is not pipelined costs one property read.
 */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** The last request of a connection that may change something, kept until it is answered. */
const LAST_UNSAFE = Symbol('svcdb.lastUnsafeResponse');

type Tracked = Socket & { [LAST_UNSAFE]?: ServerResponse };

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export function inOrder(handler: Handler): Handler {
  return (req, res) => {
    // HTTP/2 streams are not pipelined (and its requests' sockets are the session's).
    if (req.httpVersionMajor !== 1) return handler(req, res);
    const socket = req.socket as Tracked;
    const unsafe = !SAFE_METHODS.has(req.method ?? '');
    const pipelined = res.socket === null;
    // Read before it is replaced: is a request before this one that may change something still unanswered?
    const earlier = socket[LAST_UNSAFE];
    if (unsafe) socket[LAST_UNSAFE] = res;
    if (pipelined && (unsafe || (earlier !== undefined && !earlier.writableFinished))) {
      // Its turn comes inside node's finishing of the answer before it: run it after that.
      res.once('socket', () => process.nextTick(handler, req, res));
      return;
    }
    handler(req, res);
  };
}
