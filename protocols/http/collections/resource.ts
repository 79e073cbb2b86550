import { SvcError } from '../../../core/errors.js';
import type { Collection } from './collection-table.js';
import { CREATED_AT_COLUMN, ID_COLUMN, NAME_COLUMN, UPDATED_AT_COLUMN } from './limits.js';
import { isUuid } from './uuid.js';

/**
 * How a resource maps to a row: a field named like a column is that column; any other field is a
 * key of the `extra` JSONB column (422 when the table has none). created_at and updated_at are
 * set by the server: values sent for them are ignored, so a resource read and sent back works.
 */
export type WriteMode = 'create' | 'replace' | 'merge';

export interface RowWrite {
  /** Column name -> JSON value, for columns the request names (id included when given). */
  readonly columns: Record<string, unknown>;
  /** Fields bound for the extra column; a null in a merge removes that field. */
  readonly extra: Record<string, unknown>;
}

const SERVER_SET: ReadonlySet<string> = new Set([CREATED_AT_COLUMN, UPDATED_AT_COLUMN]);

function invalid(message: string, details: Record<string, unknown>): SvcError {
  return new SvcError('VALIDATION_ERROR', message, { reason: 'schema_validation', location: 'body', ...details });
}

function checkName(body: Record<string, unknown>, mode: WriteMode): void {
  if (!Object.hasOwn(body, NAME_COLUMN)) {
    if (mode !== 'merge') throw invalid('body must have the property name', { field: NAME_COLUMN });
    return;
  }
  const name = body[NAME_COLUMN];
  if (typeof name !== 'string' || name.length === 0) throw invalid('body.name must be a non-empty string', { field: NAME_COLUMN });
}

/** A body id must be a UUID when the id column is one, and the id of the URL when there is one. */
function checkId(collection: Collection, body: Record<string, unknown>, pathId: string | null): void {
  if (!Object.hasOwn(body, ID_COLUMN)) return;
  const id = body[ID_COLUMN];
  if (collection.id.type.name === 'uuid' && !isUuid(id)) throw invalid('body.id must be a UUID', { field: ID_COLUMN });
  if (pathId !== null && String(id).toLowerCase() !== pathId.toLowerCase()) {
    throw invalid('body.id differs from the id of the URL; an id cannot be changed', { field: ID_COLUMN });
  }
}

/** The columns and extra fields of a request body (a JSON object), checked as docs/collections.md says. */
export function rowWriteOf(collection: Collection, body: unknown, mode: WriteMode, pathId: string | null): RowWrite {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('body must be a JSON object', {});
  const fields = body as Record<string, unknown>;
  checkName(fields, mode);
  checkId(collection, fields, pathId);
  const extraName = collection.extra?.name ?? null;
  const columns: [string, unknown][] = [];
  const extra: [string, unknown][] = [];
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (SERVER_SET.has(key)) continue;
    if (key === extraName) throw invalid(`body.${key} is the column holding the extra fields: send those fields at the top level`, { field: key });
    if (collection.def.columns.some((c) => c.name === key)) columns.push([key, value]);
    else if (extraName !== null) extra.push([key, value]);
    else unknown.push(key);
  }
  if (unknown.length > 0) {
    throw invalid(
      `collection "${collection.def.name}" has no column for ${unknown.map((k) => `"${k}"`).join(', ')} and no JSONB column "extra" for further fields`,
      {
        field: unknown[0],
        fields: unknown,
        reason: 'unknown_fields',
      },
    );
  }
  // fromEntries defines properties: a field named __proto__ stays a field.
  return { columns: Object.fromEntries(columns), extra: Object.fromEntries(extra) };
}

/** A row read from the table as a resource: its columns, then the extra fields no column shadows. */
export function resourceOf(collection: Collection, row: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const extraName = collection.extra?.name ?? null;
  const entries: [string, unknown][] = collection.def.columns.filter((c) => c.name !== extraName).map((c) => [c.name, row[c.name] ?? null]);
  const stored = extraName === null ? null : row[extraName];
  if (typeof stored === 'object' && stored !== null && !Array.isArray(stored)) {
    const taken = new Set(entries.map(([k]) => k));
    for (const [key, value] of Object.entries(stored)) if (!taken.has(key)) entries.push([key, value]);
  }
  return Object.fromEntries(entries);
}
