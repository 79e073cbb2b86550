import type { FastifyReply } from 'fastify';
import { stringifyJson } from '../../core/json-exact.js';

/**
 * The JSON text of result rows, written by hand for the answers every read sends (a row by id,
 * POST /query's rows): the same text stringifyJson (JSON.stringify plus exact jsonb numbers) gives,
 * byte for byte, at a fraction of its cost for small rows (JSON.stringify looks for toJSON on every
 * value and the exact mode scans its output). Only the primitives a row holds are written here —
 * strings, finite and non-finite numbers, booleans, null — and members JSON.stringify leaves out
 * (undefined, functions, symbols) are left out; any other value (arrays, jsonb objects, JsonNumber,
 * a bigint, which throws as JSON.stringify does) is written by stringifyJson itself.
 * Tested against stringifyJson by a property test (test/protocols/json-reply.test.ts).
 */

/** The content type fastify gives a serialized object (kept so the answer's headers do not change). */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Quoted member names, kept across rows (a table's columns repeat on every answer); cleared when full. */
const QUOTED_KEYS_MAX = 4096;
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size >= QUOTED_KEYS_MAX) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

/** A member's value as JSON text; undefined where JSON.stringify leaves the member out. */
function memberJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      // JSON.stringify writes a finite number as String() does (-0 as 0), the others as null.
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return value === null ? 'null' : stringifyJson(value);
  }
}

/** One row (an object of column name to JSON-ready value) as stringifyJson writes it. */
export function rowJson(row: Readonly<Record<string, unknown>>): string {
  if (typeof (row as { toJSON?: unknown }).toJSON === 'function') return stringifyJson(row);
  let text = '{';
  for (const key of Object.keys(row)) {
    const member = memberJson(row[key]);
    if (member === undefined) continue;
    text += text.length === 1 ? `${quotedKey(key)}:${member}` : `,${quotedKey(key)}:${member}`;
  }
  return `${text}}`;
}

/** An array of rows as stringifyJson writes it. */
export function rowsJson(rows: readonly Readonly<Record<string, unknown>>[]): string {
  let text = '[';
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    // An array element JSON.stringify cannot write is null there (never a row; kept exact anyway).
    const element = typeof row === 'object' && row !== null ? rowJson(row) : (memberJson(row) ?? 'null');
    text += i === 0 ? element : `,${element}`;
  }
  return `${text}]`;
}

/**
 * Sends JSON text already written (the reply's preSerialization step is skipped: nothing to
 * serialize); the content type is the one fastify gives a serialized object, and the onSend hooks
 * (rate-limit headers, content negotiation) see the same payload as before.
 */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.header('content-type', JSON_CONTENT_TYPE).send(text);
}
