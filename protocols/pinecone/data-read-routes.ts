import type { FastifyPluginAsync } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { FETCH_IDS_MAX, topKMax } from '../vectors/limits.js';
import {
  checkSparse,
  checkValues,
  DEFAULT_NAMESPACE_NAME,
  indexParams,
  indexRequest,
  namespaceOf,
  recordOf,
  sparseSchema,
  type DataPlaneDeps,
  type Run,
  type SparseValues,
} from './data-common.js';
import type { VectorIndex } from './index-store.js';
import { aliased } from './field-names.js';
import { metadataFilterSql } from './metadata-filter.js';
import { hybridRerank, pineconeScore } from './scoring.js';
import { rowsJson, sendJsonText } from '../http/json-reply.js';

type Params = { index_name: string };

interface QueryBody {
  topK: number;
  namespace?: string;
  filter?: Record<string, unknown>;
  includeValues?: boolean;
  includeMetadata?: boolean;
  vector?: number[];
  sparseVector?: SparseValues;
  id?: string;
}

/** The spec's default top_k (Pinecone requires topK; its clients always send it). */
const TOP_K_DEFAULT = 10;

/** A query body as sent: Pinecone's camelCase names and the spec's snake_case ones (field-names.ts). */
type RawQueryBody = Omit<QueryBody, 'topK'> & {
  topK?: number;
  top_k?: number;
  include_values?: boolean;
  include_metadata?: boolean;
  sparse_vector?: SparseValues;
};

/** One name per field, the camelCase one; top_k defaults to 10. */
function queryBody(raw: RawQueryBody): QueryBody {
  const body: Record<string, unknown> = raw;
  const sparseVector = aliased<SparseValues>(body, 'sparseVector', 'sparse_vector');
  const includeValues = aliased<boolean>(body, 'includeValues', 'include_values');
  const includeMetadata = aliased<boolean>(body, 'includeMetadata', 'include_metadata');
  // Fields set one by one (absent ones left out), not spread in: a spread per request takes V8's slow path.
  const query: QueryBody = { topK: aliased<number>(body, 'topK', 'top_k') ?? TOP_K_DEFAULT };
  if (raw.namespace !== undefined) query.namespace = raw.namespace;
  if (raw.filter !== undefined) query.filter = raw.filter;
  if (raw.vector !== undefined) query.vector = raw.vector;
  if (raw.id !== undefined) query.id = raw.id;
  if (sparseVector !== undefined) query.sparseVector = sparseVector;
  if (includeValues !== undefined) query.includeValues = includeValues;
  if (includeMetadata !== undefined) query.includeMetadata = includeMetadata;
  return query;
}

const USAGE = { readUnits: 1 };
const USAGE_JSON = JSON.stringify(USAGE);
/** Ids per page of /vectors/list: Pinecone's default 100, at most 1000. */
const LIST_LIMIT_DEFAULT = 100;
const LIST_LIMIT_MAX = 1000;

function schemas(deps: DataPlaneDeps) {
  const topK = { type: 'integer', minimum: 1, maximum: topKMax(deps.limits) };
  return {
    query: {
      type: 'object',
      properties: {
        topK: topK,
        top_k: topK,
        namespace: { type: 'string' },
        filter: { type: 'object' },
        includeValues: { type: 'boolean' },
        include_values: { type: 'boolean' },
        includeMetadata: { type: 'boolean' },
        include_metadata: { type: 'boolean' },
        vector: { type: 'array', maxItems: deps.limits.vectorDimensionsMax, items: { type: 'number' } },
        sparseVector: sparseSchema,
        sparse_vector: sparseSchema,
        id: { type: 'string', minLength: 1, maxLength: 512 },
      },
    },
    fetch: {
      type: 'object',
      required: ['ids'],
      properties: {
        ids: { type: 'array', minItems: 1, maxItems: FETCH_IDS_MAX, items: { type: 'string', minLength: 1, maxLength: 512 } },
        namespace: { type: 'string' },
      },
    },
    list: {
      type: 'object',
      properties: {
        prefix: { type: 'string', maxLength: 512 },
        limit: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX },
        paginationToken: { type: 'string', maxLength: 2048 },
        namespace: { type: 'string' },
      },
    },
  };
}

/** The query vector: the body's, or the stored values of the record `id`; null when that record does not exist. */
async function queryVector(index: VectorIndex, run: Run, body: QueryBody, namespace: string): Promise<number[] | null> {
  if ((body.vector === undefined) === (body.id === undefined))
    throw new SvcError('VALIDATION_ERROR', 'query takes exactly one of vector and id', { field: 'vector' });
  if (body.vector !== undefined) {
    checkValues(index, body.vector, 'vector');
    return body.vector;
  }
  const { rows } = await run(`SELECT "values" FROM ${index.sql} WHERE namespace = $1 AND id = $2`, [namespace, body.id], 1);
  return (rows[0]?.['values'] as number[] | undefined) ?? null;
}

/** How many nearest rows a hybrid query rescores (dense order first, then dense + sparse exactly). */
const hybridCandidates = (topK: number, max: number): number => Math.min(max, Math.max(topK * 10, 100));

async function runQuery(deps: DataPlaneDeps, index: VectorIndex, run: Run, search: Run, body: QueryBody): Promise<Record<string, unknown>[]> {
  const namespace = namespaceOf(body.namespace);
  const vector = await queryVector(index, run, body, namespace);
  if (vector === null) return [];
  checkSparse(body.sparseVector, 'sparseVector');
  const hybrid = body.sparseVector !== undefined && body.sparseVector.indices.length > 0;
  if (hybrid && index.metric !== 'dotproduct')
    throw new SvcError('VALIDATION_ERROR', 'sparse vectors need an index with the dotproduct metric', { field: 'sparseVector' });
  const params: unknown[] = [vector, namespace];
  const where = [
    'namespace = $2',
    '"values" IS NOT NULL',
    ...(body.filter && Object.keys(body.filter).length > 0 ? [metadataFilterSql(body.filter, params)] : []),
  ];
  const limit = hybrid ? hybridCandidates(body.topK, topKMax(deps.limits)) : body.topK;
  const distance = `"values" ${index.operator} CAST($1 AS vector)`;
  // Only the columns the answer shows: a vector turned into JSON costs more than the search itself.
  const withValues = body.includeValues === true;
  const columns = [
    'id',
    `${distance} AS "__distance"`,
    ...(withValues ? ['"values"'] : []),
    ...(withValues || hybrid ? ['sparse_values'] : []),
    ...(body.includeMetadata === true ? ['metadata'] : []),
  ];
  const sql = `SELECT ${columns.join(', ')} FROM ${index.sql} WHERE ${where.join(' AND ')} ORDER BY ${distance} LIMIT ${limit}`;
  const { rows } = await search(sql, params, limit);
  const withMetadata = body.includeMetadata === true;
  if (!hybrid) return rows.map((row) => scoredRecord(row, pineconeScore(index.metric, Number(row['__distance'])), withValues, withMetadata));
  const scored = rows.map((row) => ({ row, score: pineconeScore(index.metric, Number(row['__distance'])) }));
  return hybridRerank(scored, body.sparseVector!)
    .slice(0, body.topK)
    .map(({ row, score }) => scoredRecord(row, score, withValues, withMetadata));
}

/**
 * A match: the record's fields, then its score (the same keys in the same order as a spread of the
 * record with score after it, without the spread: an object spread per match took V8's slow path).
 */
function scoredRecord(row: Record<string, unknown>, score: number, withValues: boolean, withMetadata: boolean): Record<string, unknown> {
  const match = recordOf(row, withValues, withMetadata);
  match['score'] = score;
  return match;
}

/** POST {host}/query, GET {host}/vectors/fetch, GET {host}/vectors/list, POST|GET {host}/describe_index_stats. */
export function dataReadRoutes(deps: DataPlaneDeps): FastifyPluginAsync {
  const schema = schemas(deps);
  return async (app) => {
    app.post<{ Params: Params; Body: RawQueryBody }>(
      '/indexes/:index_name/query',
      { schema: { params: indexParams, body: schema.query } },
      async (request, reply): Promise<void> => {
        const { index, run, search } = indexRequest(deps, request);
        const body = queryBody(request.body ?? {});
        const matches = await runQuery(deps, index, run, search, body);
        // Written at once (json-reply.ts: the same text as serializing { matches, namespace, usage }); nothing
        // returned, the answer is sent (a returned reply would be sent again).
        sendJsonText(reply, `{"matches":${rowsJson(matches)},"namespace":${JSON.stringify(body.namespace ?? '')},"usage":${USAGE_JSON}}`);
      },
    );

    app.get<{ Params: Params; Querystring: { ids: string[]; namespace?: string } }>(
      '/indexes/:index_name/vectors/fetch',
      { schema: { params: indexParams, querystring: schema.fetch } },
      async (request) => {
        const { index, run } = indexRequest(deps, request);
        const { ids, namespace } = request.query;
        const { rows } = await run(
          `SELECT id, "values", sparse_values, metadata FROM ${index.sql} WHERE namespace = $1 AND id = ANY($2)`,
          [namespaceOf(namespace), ids],
          FETCH_IDS_MAX,
        );
        const vectors = Object.fromEntries(rows.map((row) => [String(row['id']), recordOf(row, true, true)]));
        return { vectors, namespace: namespace ?? '', usage: USAGE };
      },
    );

    app.get<{ Params: Params; Querystring: { prefix?: string; limit?: number; paginationToken?: string; namespace?: string } }>(
      '/indexes/:index_name/vectors/list',
      { schema: { params: indexParams, querystring: schema.list } },
      async (request) => {
        const { index, run } = indexRequest(deps, request);
        const { prefix = '', limit = LIST_LIMIT_DEFAULT, paginationToken, namespace } = request.query;
        const after = paginationToken === undefined ? '' : Buffer.from(paginationToken, 'base64url').toString('utf8');
        const params: unknown[] = [namespaceOf(namespace), after, prefix, [...prefix].length];
        const sql = `SELECT id FROM ${index.sql} WHERE namespace = $1 AND id > $2 AND substr(id, 1, $4) = $3 ORDER BY id LIMIT ${limit + 1}`;
        const { rows } = await run(sql, params, limit + 1);
        const page = rows.slice(0, limit).map((r) => ({ id: String(r['id']) }));
        const next = rows.length > limit ? Buffer.from(page.at(-1)!.id, 'utf8').toString('base64url') : undefined;
        return { vectors: page, ...(next === undefined ? {} : { pagination: { next } }), namespace: namespace ?? '', usage: USAGE };
      },
    );

    const stats = async (index: VectorIndex, run: Run, filter: Record<string, unknown> | undefined) => {
      const params: unknown[] = [];
      const where = filter && Object.keys(filter).length > 0 ? `WHERE ${metadataFilterSql(filter, params)}` : '';
      const { rows } = await run(`SELECT namespace, count(*) AS n FROM ${index.sql} ${where} GROUP BY namespace`, params);
      const namespaces = Object.fromEntries(
        rows.map((r) => [r['namespace'] === '' ? DEFAULT_NAMESPACE_NAME : String(r['namespace']), { vectorCount: Number(r['n']) }]),
      );
      const total = rows.reduce((sum, r) => sum + Number(r['n']), 0);
      return {
        namespaces,
        dimension: index.dimension,
        indexFullness: total / deps.limits.vectorIndexRecordsMax,
        totalVectorCount: total,
        metric: index.metric,
        vectorType: 'dense',
      };
    };
    app.post<{ Params: Params; Body: { filter?: Record<string, unknown> } }>(
      '/indexes/:index_name/describe_index_stats',
      { schema: { params: indexParams } },
      async (request) => {
        const { index, run } = indexRequest(deps, request);
        return stats(index, run, request.body?.filter);
      },
    );
    app.get<{ Params: Params }>('/indexes/:index_name/describe_index_stats', { schema: { params: indexParams } }, async (request) => {
      const { index, run } = indexRequest(deps, request);
      return stats(index, run, undefined);
    });
  };
}
