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

/** A location from the raw tree: the JSON omits zeros (offset 0), PostgreSQL writes -1 for unknown. */
export function locOf(body: { location?: number } | undefined): number {
  if (body === undefined) return -1;
  return body.location ?? 0;
}

// What a user wrote, for raw nodes whose names do not say it.
const SPELLED: Readonly<Record<string, string>> = {
  GroupingFunc: 'GROUPING()',
  XmlExpr: 'XML functions',
  XmlSerialize: 'XMLSERIALIZE',
  RangeTableSample: 'TABLESAMPLE',
  RangeTableFunc: 'XMLTABLE',
  JsonTable: 'JSON_TABLE',
  JsonIsPredicate: 'IS JSON',
  JsonObjectConstructor: 'JSON_OBJECT',
  JsonArrayConstructor: 'JSON_ARRAY',
  JsonArrayQueryConstructor: 'JSON_ARRAY',
  JsonObjectAgg: 'JSON_OBJECTAGG',
  JsonArrayAgg: 'JSON_ARRAYAGG',
  JsonFuncExpr: 'SQL/JSON query functions',
  JsonParseExpr: 'JSON()',
  JsonScalarExpr: 'JSON_SCALAR',
  JsonSerializeExpr: 'JSON_SERIALIZE',
  MergeSupportFunc: 'MERGE_ACTION()',
  CurrentOfExpr: 'WHERE CURRENT OF',
};

/** INVALID_QUERY with reason 'unsupported' for a raw node the translator has no mapping for. */
export function unsupportedNode(what: string, loc: number): SvcError {
  const pretty = SPELLED[what] ?? what.replace(/_/g, ' ');
  return new SvcError('INVALID_QUERY', `${pretty} is not supported`, { node: what, reason: 'unsupported', ...(loc >= 0 ? { position: loc + 1 } : {}) });
}

/** A required child: a raw tree without it is malformed (never from PostgreSQL's grammar). */
export function req(node: Node | undefined, where: string): Node {
  if (node === undefined || node === null) throw unsupportedNode(`${where} without operand`, -1);
  return node;
}

/** The operator's own name: `OPERATOR(pg_catalog.+)` is `+`. */
export function operatorName(list: readonly Node[] | undefined): string {
  const parts = names(list);
  return parts[parts.length - 1] ?? '';
}
