/**
 * Small readers of libpg-query's raw parse tree (typed by @pgsql/types) shared by the translators:
 * a raw `Node` is a one-key object `{ NodeTag: body }`; lists hold `{ String: { sval } }` names.
 */
import type { Node } from '@pgsql/types';
import { SvcError } from '../../../core/errors.js';

/** A raw node's tag and body (`{ A_Const: {...} }` -> ['A_Const', {...}]). */
export function tagOf(node: Node): [string, Record<string, unknown>] {
  const entry = Object.entries(node)[0];
  if (entry === undefined) throw unsupportedNode('empty node', -1);
  return [entry[0], entry[1] as Record<string, unknown>];
}

/** The body of `node` when its tag is `tag`, else undefined. */
export function bodyOf<T>(node: Node | undefined, tag: string): T | undefined {
  if (node === undefined || node === null) return undefined;
  return (node as Record<string, unknown>)[tag] as T | undefined;
}

/** The text of a `String` node (names in PostgreSQL's lists are String nodes). */
export function stringOf(node: Node): string {
  const s = bodyOf<{ sval?: string }>(node, 'String');
  if (s === undefined) throw unsupportedNode(tagOf(node)[0], -1);
  return s.sval ?? '';
}

/** A list of String nodes as plain strings ([] when absent). */
export function names(list: readonly Node[] | undefined): string[] {
  return (list ?? []).map(stringOf);
}

/** The items of a `List` node (the grammar wraps IN lists, VALUES rows and BETWEEN bounds in one). */
export function listItems(node: Node | undefined): Node[] {
  const list = bodyOf<{ items?: Node[] }>(node, 'List');
  return list?.items ?? [];
}

/** A location from the raw tree (absent = unknown = -1). */
export function locOf(body: { location?: number } | undefined): number {
  return body?.location ?? -1;
}

/** INVALID_QUERY with reason 'unsupported' for a raw node the translator has no mapping for. */
export function unsupportedNode(what: string, loc: number): SvcError {
  const pretty = what.replace(/_/g, ' ');
  return new SvcError('INVALID_QUERY', `${pretty} is not supported`, { node: what, reason: 'unsupported', ...(loc >= 0 ? { position: loc + 1 } : {}) });
}
