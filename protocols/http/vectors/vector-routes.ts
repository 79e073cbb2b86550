import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { SvcError } from '../../../core/errors.js';
import { isJsonNull } from '../../../core/json-exact.js';
import { checkExpression, type SqlEngine } from '../../../query/index.js';
import { engineScope } from '../../auth/principal.js';
import { topKMax, TOP_K_DEFAULT, vectorTimeoutMs, type VectorLimits } from '../../vectors/limits.js';
import { scoreOf } from '../../vectors/scores.js';
import {
  checkDimension,
  checkMetadataSize,
  DISTANCE_OPERATOR,
  quoteIdent,
  searchTarget,
  tableNamed,
  type Metric,
  type VectorCatalog,
  type VectorTable,
} from '../../vectors/vector-table.js';
import { MALFORMED_REQUEST_CODE } from '../../errors.js';
import { rowsJson, sendJsonText } from '../json-reply.js';

/** The field carrying a stored vector in a search result (include_vectors): the upsert record's own name. */
export const VECTOR_FIELD = 'vector';

interface SearchBody {
  index: string;
  vector: number[];
  top_k: number;
  filter?: string | null;
  include_vectors: boolean;
  include_metadata: boolean;
  metric?: Metric;
  ef_search?: number;
}

interface UpsertBody {
  table: string;
  vectors: { id: string | number; vector: number[]; metadata?: Record<string, unknown> | null }[];
}

interface DeleteBody {
  table: string;
  ids?: (string | number)[] | null;
  filter?: string | null;
}

export interface VectorRouteDeps {
  readonly engine: SqlEngine;
  readonly catalog: VectorCatalog;
  readonly limits: VectorLimits;
}

const numbers = (maxItems: number) => ({ type: 'array', minItems: 1, maxItems, items: { type: 'number' } });
const idSchema = { anyOf: [{ type: 'string', minLength: 1, maxLength: 512 }, { type: 'integer' }] };
const filterSchema = { anyOf: [{ type: 'string', maxLength: 65_536 }, { type: 'null' }] };

function schemas(limits: VectorLimits) {
  const search = {
    type: 'object',
    required: ['index', 'vector'],
    additionalProperties: false,
    properties: {
      index: { type: 'string', minLength: 1, maxLength: 200 },
      vector: numbers(limits.vectorDimensionsMax),
      top_k: { type: 'integer', minimum: 1, maximum: topKMax(limits), default: TOP_K_DEFAULT },
      filter: filterSchema,
      include_vectors: { type: 'boolean', default: false },
      include_metadata: { type: 'boolean', default: false },
      metric: { type: 'string', enum: ['cosine', 'l2', 'inner_product'] },
      ef_search: { type: 'integer', minimum: 1, maximum: 1000 },
    },
  };
  const record = {
    type: 'object',
    required: ['id', 'vector'],
    additionalProperties: false,
    properties: { id: idSchema, vector: numbers(limits.vectorDimensionsMax), metadata: { anyOf: [{ type: 'object' }, { type: 'null' }] } },
  };
  const upsert = {
    type: 'object',
    required: ['table', 'vectors'],
    additionalProperties: false,
    properties: {
      table: { type: 'string', minLength: 1, maxLength: 200 },
      vectors: { type: 'array', minItems: 1, maxItems: limits.vectorUpsertCountMax, items: record },
    },
  };
  const remove = {
    type: 'object',
    required: ['table'],
    additionalProperties: false,
    properties: {
      table: { type: 'string', minLength: 1, maxLength: 200 },
      ids: { anyOf: [{ type: 'array', maxItems: limits.vectorUpsertCountMax, items: idSchema }, { type: 'null' }] },
      filter: filterSchema,
    },
  };
  return { search, upsert, remove };
}

/**
 * A filter proven ONE expression (query/filter.ts, as the rows endpoints check theirs), spliced in
 * two pairs of parentheses so `a) OR (b` cannot escape the AND around it.
 */
function conditionOf(filter: string, limits: VectorLimits): string {
  return `((${checkExpression(filter, { what: 'filter', textBytesMax: limits.queryTextBytesMax })}))`;
}

const scope = (request: FastifyRequest, limits: VectorLimits) => ({ ...engineScope(request), timeoutMs: vectorTimeoutMs(limits) });

/** The SELECT of a search: the nearest rows first (ORDER BY <op> LIMIT k, which an hnsw index serves). */
function searchSql(target: VectorTable, body: SearchBody, metric: Metric, filter: string | null): string {
  const vec = quoteIdent(target.vector.name);
  const distance = `${vec} ${DISTANCE_OPERATOR[metric]} CAST($1 AS vector)`;
  const columns = [`${quoteIdent(target.id.name)} AS "__id"`, `${distance} AS "__distance"`];
  if (body.include_vectors) columns.push(`${vec} AS "__vector"`);
  if (body.include_metadata) {
    if (target.metadata !== null) columns.push(`${quoteIdent(target.metadata.name)} AS "__metadata"`);
    else for (const c of target.def.columns) if (c !== target.id && c !== target.vector) columns.push(quoteIdent(c.name));
  }
  const where = [`${vec} IS NOT NULL`, ...(filter === null ? [] : [filter])].join(' AND ');
  return `SELECT ${columns.join(', ')} FROM ${target.sql} WHERE ${where} ORDER BY ${distance} LIMIT $2`;
}

const METRICS: readonly Metric[] = ['cosine', 'l2', 'inner_product'];

/**
 * The SELECT text of unfiltered searches, per target (searchTarget keeps one while its table's
 * definition is the same object) and answer shape (metric, include flags: 12 at most): every such
 * request sends the same string, built once, whose hash the plan cache's lookup has kept.
 */
const unfilteredSql = new WeakMap<VectorTable, (string | undefined)[]>();

function unfilteredSearchSql(target: VectorTable, body: SearchBody, metric: Metric): string {
  let byShape = unfilteredSql.get(target);
  if (byShape === undefined) unfilteredSql.set(target, (byShape = []));
  const shape = METRICS.indexOf(metric) * 4 + (body.include_vectors ? 2 : 0) + (body.include_metadata ? 1 : 0);
  return (byShape[shape] ??= searchSql(target, body, metric, null));
}

function searchResult(row: Record<string, unknown>, target: VectorTable, body: SearchBody, metric: Metric): Record<string, unknown> {
  const distance = Number(row['__distance']);
  const result: Record<string, unknown> = { id: row['__id'], score: scoreOf(metric, distance), distance };
  if (body.include_metadata) {
    // A JSON null document (JSON_NULL in engine rows) reads as no metadata, as SQL NULL does.
    if (target.metadata !== null) result.metadata = isJsonNull(row['__metadata'] ?? null) ? {} : row['__metadata'];
    // The table's other columns by name (a user column may itself start with "__", as the aliases above do).
    else result.metadata = Object.fromEntries(target.def.columns.filter((c) => c !== target.id && c !== target.vector).map((c) => [c.name, row[c.name]]));
  }
  if (body.include_vectors) result[VECTOR_FIELD] = row['__vector'];
  return result;
}

/** Keeps the last record of each id (as a later upsert of the same id would win). */
function lastPerId<T extends { id: string | number }>(records: readonly T[]): T[] {
  const byId = new Map<string, T>();
  for (const r of records) byId.set(String(r.id), r);
  return [...byId.values()];
}

function upsertSql(target: VectorTable, count: number): string {
  const id = quoteIdent(target.id.name);
  const vec = quoteIdent(target.vector.name);
  const meta = target.metadata === null ? null : quoteIdent(target.metadata.name);
  const width = meta === null ? 2 : 3;
  const rows = Array.from({ length: count }, (_, i) => {
    const p = i * width;
    // No CASTs: the target columns type the parameters (a CAST per row costs more than the insert).
    return `($${p + 1}, $${p + 2}${meta === null ? '' : `, $${p + 3}`})`;
  });
  const set = [`${vec} = EXCLUDED.${vec}`, ...(meta === null ? [] : [`${meta} = EXCLUDED.${meta}`])].join(', ');
  return `INSERT INTO ${target.sql} (${[id, vec, ...(meta === null ? [] : [meta])].join(', ')}) VALUES ${rows.join(', ')} ON CONFLICT (${id}) DO UPDATE SET ${set}`;
}

function upsertParams(target: VectorTable, records: UpsertBody['vectors'], metadataBytesMax: number): unknown[] {
  const params: unknown[] = [];
  records.forEach((r, i) => {
    checkDimension(target, r.vector, `vectors.${i}.vector`);
    checkMetadataSize(r.metadata, metadataBytesMax, `vectors.${i}.metadata`);
    const hasMetadata = r.metadata !== undefined && r.metadata !== null && Object.keys(r.metadata).length > 0;
    if (target.metadata === null && hasMetadata) {
      throw new SvcError('VALIDATION_ERROR', `vectors.${i}.metadata: table "${target.def.name}" has no JSONB column named metadata`, {
        field: `vectors.${i}.metadata`,
      });
    }
    // An id is text or a number (idSchema), bound as text: the id column's type reads it (a number for a TEXT id is its text).
    params.push(String(r.id), r.vector);
    if (target.metadata !== null) params.push(r.metadata ?? null);
  });
  return params;
}

/** POST /vectors/search, POST /vectors/upsert, DELETE /vectors (under /api/v1): vectors in SQL tables. */
export function vectorRoutes(deps: VectorRouteDeps): FastifyPluginAsync {
  const { engine, catalog, limits } = deps;
  const schema = schemas(limits);
  return async (app) => {
    app.post<{ Body: SearchBody }>('/vectors/search', { schema: { body: schema.search } }, async (request, reply): Promise<void> => {
      const started = performance.now();
      const body = request.body;
      const target = searchTarget(catalog, engineScope(request).tenant, body.index);
      checkDimension(target, body.vector, 'vector');
      const filter = body.filter ? conditionOf(body.filter, limits) : null;
      // The index's own metric unless the request names another (which then runs as an exact scan).
      const metric = body.metric ?? target.indexMetric ?? 'cosine';
      const sql = filter === null ? unfilteredSearchSql(target, body, metric) : searchSql(target, body, metric, filter);
      // Field by field, in one shape (spreads of the scope per request took V8's slow path); absent ones are undefined.
      const { tenant, readOnly } = engineScope(request);
      const options = {
        params: [body.vector, body.top_k],
        maxRows: body.top_k,
        tenant,
        readOnly,
        timeoutMs: vectorTimeoutMs(limits),
        efSearch: body.ef_search,
      };
      // A plain top-k goes straight to the index (query/fast-vector.ts); anything else through the executor.
      const result = await (engine.vectorSelect(sql, options) ?? engine.execute(sql, options));
      const results = result.rows.map((row) => searchResult(row, target, body, metric));
      // Written at once (json-reply.ts: the same text as serializing the object, without the serializer's hook and scan).
      // Nothing returned: the answer is sent (a returned reply would be sent again: fastify warns "already sent").
      sendJsonText(reply, `{"results":${rowsJson(results)},"query_time_ms":${Math.round(performance.now() - started)}}`);
    });

    app.post<{ Body: UpsertBody }>('/vectors/upsert', { schema: { body: schema.upsert } }, async (request) => {
      const target = tableNamed(catalog, engineScope(request).tenant, request.body.table, 'table');
      const records = lastPerId(request.body.vectors);
      const params = upsertParams(target, records, limits.vectorMetadataBytesMax);
      await engine.execute(upsertSql(target, records.length), { params, maxRows: 1, ...scope(request, limits) });
      return { success: true, upserted_count: records.length, ids: records.map((r) => String(r.id)) };
    });

    app.delete<{ Body: DeleteBody }>('/vectors', { schema: { body: schema.remove } }, async (request) => {
      const body = request.body;
      const hasIds = Array.isArray(body.ids);
      const hasFilter = typeof body.filter === 'string' && body.filter.trim() !== '';
      if (!hasIds && !hasFilter) {
        throw new SvcError(MALFORMED_REQUEST_CODE, 'DELETE /vectors needs ids, filter or both (both: rows matching both)', {
          reason: 'ids_or_filter_required',
        });
      }
      const target = tableNamed(catalog, engineScope(request).tenant, body.table, 'table');
      const where = [...(hasIds ? [`${quoteIdent(target.id.name)} = ANY($1)`] : []), ...(hasFilter ? [conditionOf(body.filter!, limits)] : [])];
      const params = hasIds ? [body.ids!.map(String)] : [];
      const result = await engine.execute(`DELETE FROM ${target.sql} WHERE ${where.join(' AND ')}`, { params, maxRows: 1, ...scope(request, limits) });
      return { success: true, deleted_count: result.affectedRows ?? 0 };
    });
  };
}
