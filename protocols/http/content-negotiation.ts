import { encode } from '@msgpack/msgpack';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { NDJSON } from './query/stream-routes.js';

/** How a JSON response of /api/v1 can be sent (docs/api.md, "Response formats"). */
export type ResponseFormat = 'json' | 'msgpack' | 'ndjson';

export const JSON_TYPE = 'application/json';
export const MSGPACK = 'application/msgpack';
/** The unregistered name many MessagePack clients send; answered in the same name. */
export const MSGPACK_LEGACY = 'application/x-msgpack';

/** Media types per format, in the server's order of preference when the client's q-values tie. */
const OFFERS: readonly { format: ResponseFormat; type: string }[] = [
  { format: 'json', type: JSON_TYPE },
  { format: 'msgpack', type: MSGPACK },
  { format: 'msgpack', type: MSGPACK_LEGACY },
  { format: 'ndjson', type: NDJSON },
];

export interface Negotiated {
  readonly format: ResponseFormat;
  /** The Content-Type to send (without parameters). */
  readonly type: string;
}

const DEFAULT: Negotiated = { format: 'json', type: JSON_TYPE };

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

/** The ranges of an Accept header; a range with a malformed q-value is ignored (RFC 9110 §12.4.2). */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const [type, subtype, extra] = range.split('/');
    if (!type || !subtype || extra !== undefined) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((p) => p.trim());
      if (name === 'q') q = value !== undefined && /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value) ? Number(value) : NaN;
    }
    if (!Number.isNaN(q)) ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** q of a media type: that of the most specific range matching it (type/subtype, then type/*, then the full wildcard). */
function qualityOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const [type, subtype] = mediaType.split('/');
  let best = { specificity: -1, q: 0 };
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity > best.specificity) best = { specificity, q: range.q };
  }
  return best.q;
}

/**
 * The format for an Accept header: the offer with the highest q (ties go to JSON, then MessagePack).
 * No header, an empty one, or one naming nothing we serve gives JSON (RFC 9110 lets a server
 * disregard Accept; a request's effect must not depend on a header that only shapes its answer).
 */
export function negotiate(accept: string | undefined): Negotiated {
  if (accept === undefined || accept.trim() === '') return DEFAULT;
  const ranges = parseAccept(accept);
  let best: Negotiated = DEFAULT;
  let bestQ = 0;
  for (const offer of OFFERS) {
    const q = qualityOf(offer.type, ranges);
    if (q > bestQ) {
      best = offer;
      bestQ = q;
    }
  }
  return best;
}

const isErrorEnvelope = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 1 && 'error' in body;

/** NDJSON of a body: the rows of a `data` array one per line, anything else as one line. */
export function ndjsonOf(body: unknown): string {
  const data = (body as { data?: unknown } | null)?.data;
  if (typeof body === 'object' && body !== null && Array.isArray(data)) {
    let text = '';
    for (const row of data) text += `${JSON.stringify(row)}\n`;
    return text;
  }
  return `${JSON.stringify(body)}\n`;
}

function addVaryAccept(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'Accept');
  else if (!/(^|,)\s*accept\s*(,|$)/i.test(String(vary))) reply.header('vary', `${String(vary)}, Accept`);
}

/**
 * A JSON response in the format the client's Accept asks for: MessagePack or NDJSON, from the
 * JSON fastify serialized (so every format carries exactly the same values); the payload itself
 * when that is JSON or it is not JSON. Error envelopes stay JSON whatever Accept says, as
 * PostgREST's do: an error must be readable by anything, curl included. Called by the API
 * listeners' onSend hook (fastify-base.ts).
 */
export function reencoded(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const contentType = reply.getHeader('content-type');
  if (typeof payload !== 'string' || typeof contentType !== 'string' || !contentType.startsWith(JSON_TYPE)) return payload;
  addVaryAccept(reply);
  const { format, type } = negotiate(request.headers.accept);
  if (format === 'json' || payload === '') return payload;
  const body: unknown = JSON.parse(payload);
  if (reply.statusCode >= 400 && isErrorEnvelope(body)) return payload;
  if (format === 'msgpack') {
    reply.type(type);
    const bytes = encode(body);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  reply.type(`${NDJSON}; charset=utf-8`);
  return ndjsonOf(body);
}
