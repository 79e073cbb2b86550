import { DEFAULT_SCHEMA, type TableDef } from '../../../core/catalog.js';
import { tableNotFound } from '../../../core/errors.js';
import type { CatalogState, TableEntry } from '../../../projections/index.js';

/** A table as a URL names it: `name` (schema public) or `schema.name` (split at the first dot). */
export interface TableRef {
  readonly schema: string;
  readonly name: string;
}

/** SQL identifier text: always double-quoted, embedded quotes doubled (never spliced bare). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** "schema"."name" */
export function qualified(ref: TableRef): string {
  return `${quoteIdent(ref.schema)}.${quoteIdent(ref.name)}`;
}

/** The {table_name} path parameter: `orders` is public.orders, `sales.orders` is sales.orders. */
export function tableRefOf(param: string): TableRef {
  const dot = param.indexOf('.');
  if (dot <= 0 || dot === param.length - 1) return { schema: DEFAULT_SCHEMA, name: param };
  return { schema: param.slice(0, dot), name: param.slice(dot + 1) };
}

/** A table as the URL named it: bare in the public schema, else schema.name. */
export function tableLabelOf(ref: TableRef): string {
  return ref.schema === DEFAULT_SCHEMA ? ref.name : `${ref.schema}.${ref.name}`;
}

/** The caller's tenant's table (or view) named by `ref`; 404 TABLE_NOT_FOUND when there is none. */
export function findTable(catalog: CatalogState, tenant: string, ref: TableRef): TableEntry {
  const entry = catalog.tableByName(tenant, ref.schema, ref.name);
  if (!entry) throw tableNotFound(tableLabelOf(ref), { noun: 'table' });
  return entry;
}

/** Per table definition (an ALTER makes a new one): asked on every request for a row by id. */
const keyNames = new WeakMap<TableDef, readonly string[]>();

/** The column names of a table's primary key, in key order (empty: no primary key). */
export function primaryKeyNames(table: TableDef): readonly string[] {
  let names = keyNames.get(table);
  if (names === undefined) {
    names = Object.freeze(table.primaryKey.map((id) => table.columns.find((c) => c.id === id)!.name));
    keyNames.set(table, names);
  }
  return names;
}

/** ISO 8601 (UTC) of catalog microseconds. */
export function isoOfMicros(micros: bigint): string {
  return new Date(Number(micros / 1000n)).toISOString();
}
