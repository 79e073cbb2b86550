import type { SqlType } from '../../core/values.js';
import type { IndexDef, TableDef } from '../../core/catalog.js';
import { encodeKey } from '../../core/key-encoding.js';
import { tableNotFound } from '../../core/errors.js';
import { decodeRowInto } from '../../core/row-codec.js';
import type { SqlValue } from '../../core/values.js';
import type { WriteView } from '../../projections/index.js';
import { invalid, relationLabel } from '../bind/index.js';
import type { CreateIndexStatement } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { uniqueViolation } from '../dml/errors.js';
import { alreadyExists, columnByName, IdAllocator, namesInSchema, nowMicros, tableRef, catalogRecord } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';

/** CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON t [USING btree|hnsw] (cols [DESC]) [WITH (...)]. */
export async function createIndex(ast: CreateIndexStatement, deps: DdlDeps): Promise<QueryResult> {
  const { schema, name: tableName } = tableRef(ast.table);
  const tenant = deps.env.tenant;
  if (ast.where) throw invalid('partial indexes (CREATE INDEX ... WHERE) are not supported', { reason: 'unsupported' });
  if (ast.elements.some((e) => e.column === null)) throw invalid('indexes on expressions are not supported; index a column', { reason: 'unsupported' });
  await submitDdl(deps, async (view) => {
    const entry = view.catalog.tableByName(tenant, schema, tableName);
    if (!entry || entry.def.kind === 'view') throw tableNotFound(relationLabel(schema === 'public' ? null : schema, tableName));
    // A refresh writes its rows without the writer's checks: a unique index there would not be enforced.
    if (entry.def.kind === 'materialized_view' && ast.unique)
      throw invalid('CREATE UNIQUE INDEX on a materialized view is not supported', { reason: 'unsupported', table: tableName });
    const table = entry.def;
    const columns = ast.elements.map((e) => columnByName(table, e.column!));
    // INCLUDE columns must exist, and are not stored: they only enable index-only scans in PostgreSQL, and svcdb reads the row anyway.
    for (const name of ast.include) columnByName(table, name);
    const taken = namesInSchema(view.catalog, tenant, schema);
    const explicit = ast.name;
    if (explicit !== null && taken.has(explicit)) {
      if (ast.ifNotExists) return null;
      throw alreadyExists('relation', explicit);
    }
    let name = explicit ?? `${table.name}_${columns.map((c) => c.name).join('_')}_idx`;
    for (let n = 1; explicit === null && taken.has(name); n++) name = `${table.name}_${columns.map((c) => c.name).join('_')}_idx${n}`;
    const { unique, method } = ast;
    if (method !== 'btree' && method !== 'hnsw') throw invalid(`access method "${method}" is not supported (btree, hnsw)`);
    if (method === 'hnsw' && (unique || columns.length !== 1 || columns[0]!.type.name !== 'vector'))
      throw invalid('an hnsw index takes exactly one VECTOR column and cannot be UNIQUE');
    const unordered = (t: SqlType): boolean => t.name === 'jsonb' || t.name === 'vector' || (t.name === 'array' && unordered(t.element ?? t));
    if (method === 'btree' && columns.some((c) => unordered(c.type))) throw invalid('btree indexes cannot hold JSONB or VECTOR columns (or arrays of them)');
    const options: Record<string, number | string> = {};
    for (const [key, value] of Object.entries(ast.options)) options[key.toLowerCase()] = Number(value);
    if (method === 'hnsw') options.metric = hnswMetric(ast.elements[0]!.opclass);
    const index: IndexDef = {
      id: new IdAllocator(view.catalog).nextIndex(),
      name,
      kind: method,
      columnIds: columns.map((c) => c.id),
      descending: ast.elements.map((e) => e.direction === 'desc'),
      unique,
      primary: false,
      options,
    };
    if (unique) await assertUnique(view, table, index, deps);
    const def: TableDef = { ...table, indexes: [...table.indexes, index], updatedAtMicros: nowMicros() };
    return { record: catalogRecord(tenant, [{ kind: 'put_table', table: def }]), result: null };
  });
  return emptyResult('CREATE INDEX');
}

const OPCLASS_METRIC: Record<string, string> = { vector_l2_ops: 'l2', vector_cosine_ops: 'cosine', vector_ip_ops: 'inner_product' };

/** The metric of an hnsw index from its operator class (pgvector's names); cosine when none is given. */
function hnswMetric(opclass: string | null): string {
  if (opclass === null) return 'cosine';
  const metric = OPCLASS_METRIC[opclass.toLowerCase()];
  if (!metric) throw invalid(`operator class "${opclass}" does not exist for access method "hnsw" (vector_l2_ops, vector_cosine_ops, vector_ip_ops)`);
  return metric;
}

/** A UNIQUE index on existing rows: refuse when two rows already share a key (NULLs are distinct). */
export async function assertUnique(view: WriteView, table: TableDef, index: IndexDef, deps: DdlDeps): Promise<void> {
  const positions = index.columnIds.map((id) => table.columns.findIndex((c) => c.id === id));
  const types = positions.map((p) => table.columns[p]!.type);
  const ids = table.columns.map((c) => c.id);
  const missing = table.columns.map((c) => c.missingValue);
  const seen = new Set<string>();
  for await (const batch of view.rows(table.id)) {
    for (const [, image] of batch) {
      const values = decodeRowInto(image, ids, missing);
      const key = positions.map((p) => values[p] as SqlValue);
      if (key.some((v) => v === null)) continue;
      const k = Buffer.from(encodeKey(types, key)).toString('hex');
      if (seen.has(k)) {
        const shown = positions.map((p, i) => deps.types.formatText(table.columns[p]!.type, key[i]!)).join(', ');
        throw uniqueViolation(table.name, index.name, `(${positions.map((p) => table.columns[p]!.name).join(', ')})=(${shown})`);
      }
      seen.add(k);
    }
  }
}
