import { qualified, quoteIdent } from '../tables/table-ref.js';
import type { Collection } from './collection-table.js';
import type { RowWrite } from './resource.js';

/** SQL text of the collection routes: identifiers from the catalog, quoted; every value a $n parameter. */
export interface Statement {
  readonly sql: string;
  readonly params: unknown[];
}

const idIs = (collection: Collection, params: unknown[], id: string): string => `${quoteIdent(collection.id.name)} = $${params.push(id)}`;

/** One page in primary-key order (server ids are UUIDv7: oldest first). */
export function listSql(collection: Collection, limit: number, offset: number): Statement {
  const order = quoteIdent(collection.id.name);
  return { sql: `SELECT * FROM ${qualified(collection.ref)} ORDER BY ${order} LIMIT ${limit}${offset > 0 ? ` OFFSET ${offset}` : ''}`, params: [] };
}

export function getSql(collection: Collection, id: string): Statement {
  const params: unknown[] = [];
  return { sql: `SELECT * FROM ${qualified(collection.ref)} WHERE ${idIs(collection, params, id)}`, params };
}

export function deleteSql(collection: Collection, id: string): Statement {
  const params: unknown[] = [];
  return { sql: `DELETE FROM ${qualified(collection.ref)} WHERE ${idIs(collection, params, id)}`, params };
}

/**
 * PATCH: the named columns set, updated_at set to `nowIso`, the extra fields merged into the
 * extra column (top-level keys; a null removes the key, as JSON Merge Patch says). Null when
 * the request changes nothing (the route then reads the resource instead).
 */
export function mergeSql(collection: Collection, write: RowWrite, id: string, nowIso: string): Statement | null {
  const params: unknown[] = [];
  const sets = Object.entries(write.columns)
    .filter(([name]) => name !== collection.id.name)
    .map(([name, value]) => `${quoteIdent(name)} = $${params.push(value)}`);
  const extraEntries = Object.entries(write.extra);
  if (collection.extra !== null && extraEntries.length > 0) {
    const column = quoteIdent(collection.extra.name);
    const merged = Object.fromEntries(extraEntries.filter(([, v]) => v !== null));
    const removed = extraEntries.filter(([, v]) => v === null).map(([k]) => k);
    // CAST(... AS jsonb) rather than $n::jsonb: the engine's parser takes the cast form everywhere.
    sets.push(`${column} = (COALESCE(${column}, '{}'::jsonb) || CAST($${params.push(merged)} AS jsonb)) - CAST($${params.push(removed)} AS text[])`);
  }
  if (sets.length === 0) return null;
  if (collection.updatedAt !== null) sets.push(`${quoteIdent(collection.updatedAt.name)} = $${params.push(nowIso)}`);
  return { sql: `UPDATE ${qualified(collection.ref)} SET ${sets.join(', ')} WHERE ${idIs(collection, params, id)} RETURNING *`, params };
}

/**
 * The row of a create or replace, for the engine's JSON insert: the given columns, the extra
 * fields as the extra column, the server's timestamps, and the id (undefined: the column's default).
 */
export function insertRow(collection: Collection, write: RowWrite, id: unknown, nowIso: string): Record<string, unknown> {
  const entries: [string, unknown][] = Object.entries(write.columns).filter(([name]) => name !== collection.id.name);
  if (id !== undefined) entries.push([collection.id.name, id]);
  if (collection.extra !== null) entries.push([collection.extra.name, write.extra]);
  if (collection.createdAt !== null) entries.push([collection.createdAt.name, nowIso]);
  if (collection.updatedAt !== null) entries.push([collection.updatedAt.name, nowIso]);
  return Object.fromEntries(entries);
}

/** What a PUT over an existing row replaces: every column but the id and created_at. */
export function replacedColumns(collection: Collection): string[] {
  return collection.def.columns.map((c) => c.name).filter((n) => n !== collection.id.name && n !== collection.createdAt?.name);
}
