import { DEFAULT_SCHEMA, type ColumnDef, type IndexDef, type TableDef } from '../../core/catalog.js';
import { SvcError, tableNotFound } from '../../core/errors.js';

/** What the vector routes read of the catalog (projections' CatalogState satisfies it). */
export interface VectorCatalog {
  tableByName(tenant: string, schema: string, name: string): { readonly def: TableDef } | undefined;
  tables(): Iterable<{ readonly def: TableDef }>;
}

/** Distance operators of the SQL engine (pgvector's): smaller is nearer for all three. */
export type Metric = 'cosine' | 'l2' | 'inner_product';

export const DISTANCE_OPERATOR: Readonly<Record<Metric, string>> = Object.freeze({ cosine: '<=>', l2: '<->', inner_product: '<#>' });

/** hnsw operator classes (CREATE INDEX ... USING hnsw (col <opclass>)). */
export const OPERATOR_CLASS: Readonly<Record<Metric, string>> = Object.freeze({
  cosine: 'vector_cosine_ops',
  l2: 'vector_l2_ops',
  inner_product: 'vector_ip_ops',
});

/** A SQL identifier in double quotes (embedded quotes doubled). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Which columns of a table hold a vector record: id, vector, metadata. */
export interface VectorTable {
  /** Quoted, schema-qualified table name for SQL text. */
  readonly sql: string;
  readonly def: TableDef;
  readonly id: ColumnDef;
  readonly vector: ColumnDef;
  readonly dimension: number;
  /** A JSONB column named `metadata`, or null (then metadata is read from the other columns). */
  readonly metadata: ColumnDef | null;
  /** The metric of the hnsw index on the vector column (the named one, else the only one), or null. */
  readonly indexMetric: Metric | null;
}

function splitName(name: string): { schema: string; table: string } {
  const dot = name.indexOf('.');
  return dot < 0 ? { schema: DEFAULT_SCHEMA, table: name } : { schema: name.slice(0, dot), table: name.slice(dot + 1) };
}

const invalidTable = (def: TableDef, why: string, field: string): SvcError =>
  new SvcError('VALIDATION_ERROR', `table "${def.name}" cannot hold vector records: ${why}`, { field, table: def.name });

/**
 * The vector layout of a table: the id is its one-column primary key (else a column named id),
 * the vector its one VECTOR column (or `vectorColumn`), the metadata a JSONB column named metadata.
 */
export function vectorTableOf(def: TableDef, field: string, vectorColumn?: ColumnDef, index?: IndexDef): VectorTable {
  if (def.kind !== 'table') throw invalidTable(def, 'it is a view', field);
  const vectors = def.columns.filter((c) => c.type.name === 'vector');
  const vector = vectorColumn ?? (vectors.length === 1 ? vectors[0] : undefined);
  if (vector === undefined) throw invalidTable(def, `it has ${vectors.length} VECTOR columns; name an hnsw index to pick one`, field);
  const pk = def.primaryKey.length === 1 ? def.columns.find((c) => c.id === def.primaryKey[0]) : undefined;
  const id = pk ?? def.columns.find((c) => c.name === 'id');
  if (id === undefined) throw invalidTable(def, 'it has neither a one-column primary key nor a column named id', field);
  const metadata = def.columns.find((c) => c.name === 'metadata' && c.type.name === 'jsonb') ?? null;
  const dimension = (vector.type as { dimension?: number }).dimension ?? 0;
  const hnsw = def.indexes.filter((i) => i.kind === 'hnsw' && i.columnIds[0] === vector.id);
  const chosen = index ?? (hnsw.length === 1 ? hnsw[0] : undefined);
  const indexMetric = chosen ? ((chosen.options['metric'] as Metric | undefined) ?? 'cosine') : null;
  return { sql: `${quoteIdent(def.schema)}.${quoteIdent(def.name)}`, def, id, vector, dimension, metadata, indexMetric };
}

/** The table called `name` ([schema.]table) in the tenant, or TABLE_NOT_FOUND. */
export function tableNamed(catalog: VectorCatalog, tenant: string, name: string, field: string): VectorTable {
  const { schema, table } = splitName(name);
  const entry = catalog.tableByName(tenant, schema, table);
  if (entry === undefined) throw tableNotFound(name, { noun: 'table', details: { field } });
  return vectorTableOf(entry.def, field);
}

/**
 * searchTarget's answers found by an index name, per catalog and tenant: requests name the same index
 * again and again, and finding it scans every table of every tenant. An answer holds while its table's
 * definition is the same object (DDL on the table puts a new one; an index name is unique in its
 * schema, so no other table can take it meanwhile). Bounded: a tenant's map starts over past TARGETS_MAX names.
 */
const targetsByIndex = new WeakMap<VectorCatalog, Map<string, Map<string, VectorTable>>>();
const TARGETS_MAX = 1024;

/** An hnsw index named `name` in the tenant (its table and column), or else a table with one VECTOR column. */
export function searchTarget(catalog: VectorCatalog, tenant: string, name: string): VectorTable {
  let tenants = targetsByIndex.get(catalog);
  if (tenants === undefined) targetsByIndex.set(catalog, (tenants = new Map()));
  let targets = tenants.get(tenant);
  if (targets === undefined) tenants.set(tenant, (targets = new Map()));
  const known = targets.get(name);
  if (known !== undefined && catalog.tableByName(tenant, known.def.schema, known.def.name)?.def === known.def) return known;
  const { schema, table: indexName } = splitName(name);
  for (const { def } of catalog.tables()) {
    if (def.tenant !== tenant || def.schema !== schema) continue;
    const index = def.indexes.find((i) => i.kind === 'hnsw' && i.name === indexName);
    if (index === undefined) continue;
    const column = def.columns.find((c) => c.id === index.columnIds[0]);
    const target = vectorTableOf(def, 'index', column, index);
    if (targets.size >= TARGETS_MAX) targets.clear();
    targets.set(name, target);
    return target;
  }
  const entry = catalog.tableByName(tenant, schema, indexName);
  if (entry === undefined) throw new SvcError('TABLE_NOT_FOUND', `no hnsw index or table named "${name}"`, { field: 'index', index: name });
  return vectorTableOf(entry.def, 'index');
}

/** 422 unless `vector` has the column's dimension. */
export function checkDimension(target: VectorTable, vector: readonly number[], field: string): void {
  if (vector.length !== target.dimension) {
    throw new SvcError(
      'VALIDATION_ERROR',
      `${field} has ${vector.length} dimensions; ${target.def.name}.${target.vector.name} holds VECTOR(${target.dimension})`,
      {
        field,
        expected: target.dimension,
        actual: vector.length,
      },
    );
  }
}

/** 400 LIMIT_EXCEEDED when a metadata object's JSON text is larger than the limit. */
export function checkMetadataSize(metadata: unknown, bytesMax: number, field: string): void {
  if (metadata === undefined || metadata === null) return;
  const bytes = Buffer.byteLength(JSON.stringify(metadata), 'utf8');
  if (bytes > bytesMax) {
    throw new SvcError('LIMIT_EXCEEDED', `${field} is ${bytes} bytes of JSON; the limit is ${bytesMax} (SVC_VECTOR_MAX_METADATA_BYTES)`, {
      field,
      limit: bytesMax,
      actual: bytes,
    });
  }
}
