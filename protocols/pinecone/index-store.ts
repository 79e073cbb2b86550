import { DEFAULT_SCHEMA, type TableDef } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import { isJsonNull } from '../../core/json-exact.js';
import type { ReadOnlyReason, SqlEngine } from '../../query/index.js';
import type { VectorLimits } from '../vectors/limits.js';
import { DISTANCE_OPERATOR, OPERATOR_CLASS, quoteIdent, type Metric, type VectorCatalog } from '../vectors/vector-table.js';
import { indexNotFound } from './errors.js';

/** Pinecone's metrics and the SQL metric (operator) each one is. */
export type PineconeMetric = 'cosine' | 'euclidean' | 'dotproduct';
export const SQL_METRIC: Readonly<Record<PineconeMetric, Metric>> = Object.freeze({ cosine: 'cosine', euclidean: 'l2', dotproduct: 'inner_product' });
const METRICS = Object.keys(SQL_METRIC) as PineconeMetric[];

/** Each index is the table pinecone_<name>; its settings beyond the table are rows of pinecone__indexes. */
export const TABLE_PREFIX = 'pinecone_';
/** Index names cannot hold `_`, so no index table is ever called this. */
export const REGISTRY_TABLE = 'pinecone__indexes';
/** Pinecone's rule for index names. */
export const INDEX_NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,43}[a-z0-9])?$/;

/** hnsw build parameters of index tables (pgvector's defaults). */
const HNSW_M = 16;
const HNSW_EF_CONSTRUCTION = 64;

/** A vector index as the data plane needs it. */
export interface VectorIndex {
  readonly name: string;
  readonly sql: string;
  readonly dimension: number;
  readonly metric: PineconeMetric;
  readonly operator: string;
  readonly rowCount: number;
}

export interface IndexSettings {
  readonly spec: unknown;
  readonly deletionProtection: 'enabled' | 'disabled';
  readonly tags: Record<string, string> | null;
}

export const tableOf = (name: string): string => `${TABLE_PREFIX}${name}`;
const hnswName = (name: string, metric: PineconeMetric): string => `${TABLE_PREFIX}${name}_${metric}`;

/** The metric is kept in the hnsw index's name (pinecone_<name>_<metric>): the catalog holds it, through the log. */
function metricOf(def: TableDef, name: string): PineconeMetric {
  const hnsw = def.indexes.find((i) => i.kind === 'hnsw');
  return METRICS.find((m) => hnsw?.name === hnswName(name, m)) ?? 'cosine';
}

function fromTable(def: TableDef, name: string, rowCount: number): VectorIndex | null {
  const values = def.columns.find((c) => c.name === 'values' && c.type.name === 'vector');
  if (def.kind !== 'table' || values === undefined) return null;
  const metric = metricOf(def, name);
  const dimension = (values.type as { dimension?: number }).dimension ?? 0;
  return { name, sql: quoteIdent(def.name), dimension, metric, operator: DISTANCE_OPERATOR[SQL_METRIC[metric]], rowCount };
}

/** The index `name` of a tenant, or 404. */
export function findIndex(catalog: VectorCatalog, tenant: string, name: string): VectorIndex {
  const entry = INDEX_NAME_PATTERN.test(name) ? catalog.tableByName(tenant, DEFAULT_SCHEMA, tableOf(name)) : undefined;
  const stats = (entry as { stats?: { rowCount: number } } | undefined)?.stats;
  const index = entry === undefined ? null : fromTable(entry.def, name, stats?.rowCount ?? 0);
  if (index === null) throw indexNotFound(name);
  return index;
}

/** Every index of a tenant, by name. */
export function listIndexes(catalog: VectorCatalog, tenant: string): VectorIndex[] {
  const out: VectorIndex[] = [];
  for (const { def } of catalog.tables()) {
    if (def.tenant !== tenant || def.schema !== DEFAULT_SCHEMA || !def.name.startsWith(TABLE_PREFIX)) continue;
    const name = def.name.slice(TABLE_PREFIX.length);
    if (!INDEX_NAME_PATTERN.test(name)) continue;
    const index = fromTable(def, name, 0);
    if (index !== null) out.push(index);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export interface CreateIndexInput {
  readonly name: string;
  readonly dimension: number;
  readonly metric: PineconeMetric;
  readonly settings: IndexSettings;
}

type Run = (sql: string, params?: unknown[]) => Promise<{ rows: Record<string, unknown>[]; affectedRows: number | null }>;

/** SQL of the control plane, run with the caller's tenant and role. */
export class IndexStore {
  constructor(private readonly deps: { engine: SqlEngine; catalog: VectorCatalog; limits: VectorLimits }) {}

  /** The engine bound to one request's scope. */
  runner(scope: { tenant: string; readOnly?: ReadOnlyReason }): Run {
    const timeoutMs = Math.min(30_000, this.deps.limits.queryTimeoutMsMax);
    return (sql, params = []) => this.deps.engine.execute(sql, { params, timeoutMs, maxRows: this.deps.limits.resultRowsMax, ...scope });
  }

  /** The table, its hnsw index with the metric's operator class, then the settings row (DDL is not transactional: each step is checked on read). */
  async create(run: Run, tenant: string, input: CreateIndexInput): Promise<void> {
    if (input.dimension > this.deps.limits.vectorDimensionsMax) {
      throw new SvcError(
        'LIMIT_EXCEEDED',
        `dimension ${input.dimension} is above the limit of ${this.deps.limits.vectorDimensionsMax} (SVC_VECTOR_MAX_DIMENSION)`,
        {
          field: 'dimension',
          limit: this.deps.limits.vectorDimensionsMax,
        },
      );
    }
    if (this.deps.catalog.tableByName(tenant, DEFAULT_SCHEMA, tableOf(input.name)) !== undefined) {
      throw new SvcError('CONSTRAINT_VIOLATION', `Resource ${input.name} already exists`, { index: input.name, reason: 'already_exists' });
    }
    const table = quoteIdent(tableOf(input.name));
    await run(
      `CREATE TABLE ${table} (namespace TEXT NOT NULL, id TEXT NOT NULL, "values" VECTOR(${input.dimension}), sparse_values JSONB, metadata JSONB, PRIMARY KEY (namespace, id))`,
    );
    const opclass = OPERATOR_CLASS[SQL_METRIC[input.metric]];
    await run(
      `CREATE INDEX ${quoteIdent(hnswName(input.name, input.metric))} ON ${table} USING hnsw ("values" ${opclass}) WITH (m = ${HNSW_M}, ef_construction = ${HNSW_EF_CONSTRUCTION})`,
    );
    await this.saveSettings(run, input.name, input.settings);
  }

  async saveSettings(run: Run, name: string, settings: IndexSettings): Promise<void> {
    await run(`CREATE TABLE IF NOT EXISTS ${REGISTRY_TABLE} (name TEXT PRIMARY KEY, spec JSONB, deletion_protection TEXT NOT NULL, tags JSONB)`);
    await run(
      `INSERT INTO ${REGISTRY_TABLE} (name, spec, deletion_protection, tags) VALUES ($1, CAST($2 AS jsonb), $3, CAST($4 AS jsonb))
       ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec, deletion_protection = EXCLUDED.deletion_protection, tags = EXCLUDED.tags`,
      [name, settings.spec ?? null, settings.deletionProtection, settings.tags],
    );
  }

  /** Settings rows by index name (none when no index was ever created in the tenant). */
  async settings(run: Run, tenant: string): Promise<Map<string, IndexSettings>> {
    if (this.deps.catalog.tableByName(tenant, DEFAULT_SCHEMA, REGISTRY_TABLE) === undefined) return new Map();
    const { rows } = await run(`SELECT name, spec, deletion_protection, tags FROM ${REGISTRY_TABLE}`);
    return new Map(
      rows.map((r) => [
        String(r['name']),
        {
          spec: isJsonNull(r['spec'] ?? null) ? null : r['spec'],
          deletionProtection: r['deletion_protection'] === 'enabled' ? 'enabled' : 'disabled',
          tags: (isJsonNull(r['tags'] ?? null) ? null : r['tags']) as Record<string, string> | null,
        },
      ]),
    );
  }

  /** Drops the table (its rows and hnsw index) and the settings row. */
  async drop(run: Run, tenant: string, name: string): Promise<void> {
    await run(`DROP TABLE ${quoteIdent(tableOf(name))}`);
    if (this.deps.catalog.tableByName(tenant, DEFAULT_SCHEMA, REGISTRY_TABLE) !== undefined) await run(`DELETE FROM ${REGISTRY_TABLE} WHERE name = $1`, [name]);
  }
}

/** What describeIndex answers when an index has no settings row (a create cut short). */
export const DEFAULT_SETTINGS: IndexSettings = Object.freeze({
  spec: { serverless: { cloud: 'aws', region: 'us-east-1' } },
  deletionProtection: 'disabled',
  tags: null,
});
