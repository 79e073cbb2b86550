import { DEFAULT_SCHEMA, type ColumnDef, type TableDef } from '../../../core/catalog.js';
import { SvcError } from '../../../core/errors.js';
import type { CatalogState, TableEntry } from '../../../projections/index.js';
import { isSystemTable } from '../../system-tables.js';
import { qualified, type TableRef } from '../tables/table-ref.js';
import { CREATED_AT_COLUMN, EXTRA_COLUMN, ID_COLUMN, UPDATED_AT_COLUMN } from './limits.js';

/**
 * A collection is an svcdb table of the caller's tenant, in schema public, whose primary key is
 * one column named `id`. Its other columns are fields of its resources; a JSONB column `extra`
 * (when there is one) holds the fields that have no column.
 */
export interface Collection {
  readonly ref: TableRef;
  readonly def: TableDef;
  readonly id: ColumnDef;
  /** The JSONB column of further fields; null: the table takes only its columns. */
  readonly extra: ColumnDef | null;
  /** Set by the server when present (creation time, last write time). */
  readonly createdAt: ColumnDef | null;
  readonly updatedAt: ColumnDef | null;
}

const columnNamed = (def: TableDef, name: string): ColumnDef | null => def.columns.find((c) => c.name === name) ?? null;

/** Why a table is not a collection, or null when it is one. */
function notACollection(def: TableDef): string | null {
  if (def.kind !== 'table') return `it is a ${def.kind.replace('_', ' ')}`;
  const id = columnNamed(def, ID_COLUMN);
  if (id === null || def.primaryKey.length !== 1 || def.primaryKey[0] !== id.id) return 'its primary key is not one column named id';
  return null;
}

function collectionOf(def: TableDef): Collection {
  const extra = columnNamed(def, EXTRA_COLUMN);
  return {
    ref: { schema: def.schema, name: def.name },
    def,
    id: columnNamed(def, ID_COLUMN)!,
    extra: extra?.type.name === 'jsonb' ? extra : null,
    createdAt: columnNamed(def, CREATED_AT_COLUMN),
    updatedAt: columnNamed(def, UPDATED_AT_COLUMN),
  };
}

export function collectionNotFound(name: string): SvcError {
  return new SvcError('NOT_FOUND', `collection "${name}" does not exist`, { collection: name });
}

/**
 * The tenant's collection `name`; null when there is no such table; 409 INVALID_STATE when the
 * table exists but cannot serve as a collection (a view, or no one-column primary key `id`).
 */
export function findCollection(catalog: CatalogState, tenant: string, name: string): Collection | null {
  const entry = catalog.tableByName(tenant, DEFAULT_SCHEMA, name);
  if (!entry || isSystemTable(DEFAULT_SCHEMA, name)) return null;
  const why = notACollection(entry.def);
  if (why !== null) {
    throw new SvcError('INVALID_STATE', `table "${name}" is not a collection: ${why}`, { collection: name, reason: 'not_a_collection' });
  }
  return collectionOf(entry.def);
}

/** The tenant's collection `name`, or 404 NOT_FOUND. */
export function requireCollection(catalog: CatalogState, tenant: string, name: string): Collection {
  const found = findCollection(catalog, tenant, name);
  if (found === null) throw collectionNotFound(name);
  return found;
}

/** Every collection of a tenant (its public tables that qualify), by name. */
export function listCollections(catalog: CatalogState, tenant: string): Collection[] {
  const qualifies = (e: TableEntry): boolean =>
    e.def.tenant === tenant && e.def.schema === DEFAULT_SCHEMA && !isSystemTable(e.def.schema, e.def.name) && notACollection(e.def) === null;
  return [...catalog.tables()]
    .filter(qualifies)
    .map((e) => collectionOf(e.def))
    .sort((a, b) => (a.def.name < b.def.name ? -1 : a.def.name > b.def.name ? 1 : 0));
}

/** The table a POST to a missing collection creates (docs/collections.md, "Tables"). */
export function createCollectionSql(name: string): string {
  return [
    `CREATE TABLE ${qualified({ schema: DEFAULT_SCHEMA, name })} (`,
    '"id" UUID PRIMARY KEY DEFAULT gen_random_uuid(), ',
    '"name" TEXT NOT NULL, ',
    '"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ',
    '"updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ',
    `"extra" JSONB NOT NULL DEFAULT '{}'::jsonb)`,
  ].join('');
}
