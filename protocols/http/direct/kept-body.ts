import type { IncomingMessage } from 'node:http';
import { EventEmitter } from 'node:events';
import type { preParsingHookHandler } from 'fastify';

/**
 * A request body the direct path (direct-lane.ts) read and then handed to fastify: node gives a body
 * once, so the bytes go with the request, and the route's preParsing hook (replayKeptBody) gives
 * them to fastify's body reader as the request stream would have. fastify then checks, parses and
 * validates them as any body (limits, content length, JSON, schema); where the text is the one the
 * direct path parsed, the JSON parser takes that object instead of parsing again (keptValue).
 */
const KEPT = Symbol('svcdb.keptBody');

interface Kept {
  readonly bytes: Buffer;
  readonly parsed: { readonly text: string; readonly value: unknown } | undefined;
  /** The connection failed mid-body: what came of it is `bytes`, and fastify's reader gets this error after them. */
  readonly failure: Error | undefined;
}

type WithKept = IncomingMessage & { [KEPT]?: Kept };

export function keepBody(req: IncomingMessage, bytes: Buffer, parsed: Kept['parsed'], failure?: Error): void {
  (req as WithKept)[KEPT] = { bytes, parsed, failure };
}

/**
 * True when the direct path took the request in (and then handed it over): it did so only before
 * close() began, so the request is answered as fastify would have answered one it had taken in
 * then, not SHUTTING_DOWN (fastify-base.ts's onRequest hook asks).
 */
export function takenBeforeClosing(req: IncomingMessage): boolean {
  return (req as WithKept)[KEPT] !== undefined;
}

/**
 * preParsing hook of a route whose body the direct path may have read (POST /query): the kept
 * bytes as the stream fastify reads the body from; any other request's own stream, untouched.
 */
export const replayKeptBody: preParsingHookHandler = (request, _reply, payload, done) => {
  const kept = (request.raw as WithKept)[KEPT];
  done(null, kept === undefined ? payload : (new KeptStream(kept) as unknown as typeof payload));
};

/**
 * The kept body as fastify's body reader (its rawBody, for a parser that reads text) takes a request
 * stream: it listens for 'data', 'end' and 'error', then calls resume(), and removes its listeners
 * when done. A whole Readable per request cost ~2% of an INSERT handed over; this object emits what
 * the stream would have, at resume(). (test/http/direct-lane.test.ts hands over bodies of every kind,
 * a failed one included, through it.)
 */
class KeptStream extends EventEmitter {
  constructor(private readonly kept: Kept) {
    super();
  }

  resume(): this {
    const { bytes, failure } = this.kept;
    if (bytes.length > 0) this.emit('data', bytes);
    if (failure === undefined) this.emit('end');
    else this.emit('error', failure);
    return this;
  }
}

/** The object the direct path parsed from exactly `text` of this request's body; undefined: parse it. */
export function keptValue(req: IncomingMessage, text: string): unknown {
  const parsed = (req as WithKept)[KEPT]?.parsed;
  return parsed !== undefined && parsed.text === text ? parsed.value : undefined;
}

/**
 * True when a JSON text cannot hold a "__proto__" or "constructor" key, spelled plainly or with
 * \u escapes, nor start with a byte-order mark: JSON.parse alone then gives what fastify's parser
 * gives. That parser (secure-json-parse) runs two regular expressions over the whole text after
 * JSON.parse: on a 10,000-row bulk insert (~0.5 MB) they cost about as much again as the parse;
 * three substring searches cost ~1% of it.
 */
export function cannotPoison(text: string): boolean {
  return text.charCodeAt(0) !== 0xfeff && !text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u');
}
