import type { FastifyPluginAsync } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { MALFORMED_REQUEST_CODE } from '../errors.js';
import { checkMetadataSize } from '../vectors/vector-table.js';
import {
  checkSparse,
  checkValues,
  indexParams,
  indexRequest,
  namespaceOf,
  rootIndexRequest,
  sparseSchema,
  type DataPlaneDeps,
  type Run,
  type SparseValues,
} from './data-common.js';
import { aliased } from './field-names.js';
import type { VectorIndex } from './index-store.js';
import { metadataFilterSql } from './metadata-filter.js';

type Params = { index_name: string };

interface UpsertRecord {
  id: string;
  values: number[];
  sparseValues?: SparseValues;
  metadata?: Record<string, unknown>;
}

/** As sent: a record's sparse values as sparseValues (Pinecone's clients) or sparse_values (the spec); `index` only at the root /upsert. */
interface UpsertBody {
  vectors: (UpsertRecord & { sparse_values?: SparseValues })[];
  namespace?: string;
  index?: string;
}

interface DeleteBody {
  ids?: string[];
  deleteAll?: boolean;
  namespace?: string;
  filter?: Record<string, unknown>;
}

interface UpdateBody {
  id?: string;
  values?: number[];
  sparseValues?: SparseValues;
  sparse_values?: SparseValues;
  setMetadata?: Record<string, unknown>;
  namespace?: string;
  filter?: Record<string, unknown>;
  dryRun?: boolean;
}

const idSchema = { type: 'string', minLength: 1, maxLength: 512 };

function schemas(deps: DataPlaneDeps) {
  const { vectorUpsertCountMax, vectorDimensionsMax } = deps.limits;
  const values = { type: 'array', maxItems: vectorDimensionsMax, items: { type: 'number' } };
  const record = {
    type: 'object',
    required: ['id', 'values'],
    properties: { id: idSchema, values, sparseValues: sparseSchema, sparse_values: sparseSchema, metadata: { type: 'object' } },
  };
  const upsertProperties = { vectors: { type: 'array', minItems: 1, maxItems: vectorUpsertCountMax, items: record }, namespace: { type: 'string' } };
  return {
    upsert: { type: 'object', required: ['vectors'], properties: upsertProperties },
    rootUpsert: { type: 'object', required: ['vectors'], properties: { ...upsertProperties, index: { type: 'string', minLength: 1, maxLength: 45 } } },
    remove: {
      type: 'object',
      properties: {
        ids: { type: 'array', maxItems: vectorUpsertCountMax, items: idSchema },
        deleteAll: { type: 'boolean' },
        namespace: { type: 'string' },
        filter: { type: 'object' },
      },
    },
    update: {
      type: 'object',
      properties: {
        id: idSchema,
        values,
        sparseValues: sparseSchema,
        sparse_values: sparseSchema,
        setMetadata: { type: 'object' },
        namespace: { type: 'string' },
        filter: { type: 'object' },
        dryRun: { type: 'boolean' },
      },
    },
  };
}

/** The last record of each id wins, as with two upserts in a row. */
function lastPerId<T extends { id: string }>(records: readonly T[]): T[] {
  return [...new Map(records.map((r) => [r.id, r])).values()];
}

function upsertStatement(
  index: VectorIndex,
  records: readonly UpsertRecord[],
  namespace: string,
  metadataBytesMax: number,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const rows = records.map((r, i) => {
    checkValues(index, r.values, `vectors.${i}.values`);
    checkSparse(r.sparseValues, `vectors.${i}.sparseValues`);
    checkMetadataSize(r.metadata, metadataBytesMax, `vectors.${i}.metadata`);
    params.push(namespace, r.id, r.values, r.sparseValues ?? null, r.metadata ?? null);
    const p = i * 5;
    // No CASTs: the target columns type the parameters, and a CAST per row costs several times the insert.
    return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5})`;
  });
  const sql = `INSERT INTO ${index.sql} (namespace, id, "values", sparse_values, metadata) VALUES ${rows.join(', ')}
    ON CONFLICT (namespace, id) DO UPDATE SET "values" = EXCLUDED."values", sparse_values = EXCLUDED.sparse_values, metadata = EXCLUDED.metadata`;
  return { sql, params };
}

function deleteWhere(body: DeleteBody, params: unknown[]): string {
  const where = ['namespace = $1'];
  if (body.deleteAll === true) return where[0]!;
  const hasIds = Array.isArray(body.ids) && body.ids.length > 0;
  const hasFilter = body.filter !== undefined && Object.keys(body.filter).length > 0;
  if (!hasIds && !hasFilter)
    throw new SvcError(MALFORMED_REQUEST_CODE, 'delete needs ids, a filter or deleteAll: true', { reason: 'ids_filter_or_delete_all_required' });
  if (hasIds) {
    params.push(body.ids);
    where.push(`id = ANY($${params.length})`);
  }
  if (hasFilter) where.push(metadataFilterSql(body.filter, params));
  return where.join(' AND ');
}

/** The SET list of an update: values, sparse values, and metadata merged into the stored object. */
function updateSet(index: VectorIndex, body: UpdateBody, params: unknown[], metadataBytesMax: number): string {
  const set: string[] = [];
  if (body.values !== undefined) {
    checkValues(index, body.values, 'values');
    params.push(body.values);
    set.push(`"values" = CAST($${params.length} AS vector)`);
  }
  if (body.sparseValues !== undefined) {
    checkSparse(body.sparseValues, 'sparseValues');
    params.push(body.sparseValues);
    set.push(`sparse_values = CAST($${params.length} AS jsonb)`);
  }
  if (body.setMetadata !== undefined) {
    checkMetadataSize(body.setMetadata, metadataBytesMax, 'setMetadata');
    params.push(body.setMetadata);
    set.push(`metadata = COALESCE(metadata, CAST('{}' AS jsonb)) || CAST($${params.length} AS jsonb)`);
  }
  return set.join(', ');
}

/** The records with one name for sparse values (sparseValues), the last of each id (as two upserts in a row). */
function upsertRecords(vectors: UpsertBody['vectors']): UpsertRecord[] {
  return lastPerId(
    vectors.map((r, i) => {
      const { sparse_values: _, ...record } = r;
      const sparseValues = aliased<SparseValues>(r as unknown as Record<string, unknown>, 'sparseValues', 'sparse_values', `vectors.${i}.`);
      return sparseValues === undefined ? record : { ...record, sparseValues };
    }),
  );
}

/**
 * Before the index (its rowCount, from the catalog's stats) is read for upsert's limit: the stats
 * count only applied writes, so wait for every write answered so far (a vector acknowledged but not
 * yet applied would otherwise let the index grow past SVC_VECTOR_MAX_VECTORS).
 */
function settledCount(deps: DataPlaneDeps): Promise<void> | undefined {
  return deps.engine.settled();
}

/** One upsert: every record of the body in one INSERT ... ON CONFLICT (one log record). */
async function upsert(deps: DataPlaneDeps, index: VectorIndex, run: Run, body: UpsertBody): Promise<{ upsertedCount: number }> {
  const records = upsertRecords(body.vectors);
  if (index.rowCount + records.length > deps.limits.vectorIndexRecordsMax) {
    throw new SvcError('LIMIT_EXCEEDED', `index ${index.name} would hold more than ${deps.limits.vectorIndexRecordsMax} vectors (SVC_VECTOR_MAX_VECTORS)`, {
      limit: deps.limits.vectorIndexRecordsMax,
    });
  }
  const { sql, params } = upsertStatement(index, records, namespaceOf(body.namespace), deps.limits.vectorMetadataBytesMax);
  await run(sql, params, 1);
  return { upsertedCount: body.vectors.length };
}

/**
 * POST {host}/vectors/upsert (Pinecone's path), {host}/upsert and /upsert at the protocol's root
 * (the spec's path: the index is the body's `index`, or the tenant's only one), /vectors/delete, /vectors/update.
 */
export function dataWriteRoutes(deps: DataPlaneDeps): FastifyPluginAsync {
  const schema = schemas(deps);
  const metadataBytesMax = deps.limits.vectorMetadataBytesMax;
  return async (app) => {
    for (const path of ['/indexes/:index_name/vectors/upsert', '/indexes/:index_name/upsert']) {
      app.post<{ Params: Params; Body: UpsertBody }>(path, { schema: { params: indexParams, body: schema.upsert } }, async (request) => {
        await settledCount(deps);
        const { index, run } = indexRequest(deps, request);
        return upsert(deps, index, run, request.body);
      });
    }
    app.post<{ Body: UpsertBody }>('/upsert', { schema: { body: schema.rootUpsert } }, async (request) => {
      await settledCount(deps);
      const { index, run } = rootIndexRequest(deps, request, request.body.index);
      return upsert(deps, index, run, request.body);
    });

    app.post<{ Params: Params; Body: DeleteBody }>(
      '/indexes/:index_name/vectors/delete',
      { schema: { params: indexParams, body: schema.remove } },
      async (request) => {
        const { index, run } = indexRequest(deps, request);
        const body = request.body ?? {};
        const params: unknown[] = [namespaceOf(body.namespace)];
        await run(`DELETE FROM ${index.sql} WHERE ${deleteWhere(body, params)}`, params, 1);
        return {};
      },
    );

    app.post<{ Params: Params; Body: UpdateBody }>(
      '/indexes/:index_name/vectors/update',
      { schema: { params: indexParams, body: schema.update } },
      async (request) => {
        const { index, run } = indexRequest(deps, request);
        const body = request.body ?? {};
        const params: unknown[] = [namespaceOf(body.namespace)];
        let where: string;
        if (body.id !== undefined) {
          params.push(body.id);
          where = 'namespace = $1 AND id = $2';
        } else if (body.filter !== undefined) {
          if (body.values !== undefined || body.sparseValues !== undefined || body.sparse_values !== undefined)
            throw new SvcError('VALIDATION_ERROR', 'an update by filter may only set metadata', { field: 'values' });
          where = `namespace = $1 AND ${metadataFilterSql(body.filter, params)}`;
        } else {
          throw new SvcError(MALFORMED_REQUEST_CODE, 'update needs an id or a filter', { reason: 'id_or_filter_required' });
        }
        if (body.dryRun === true) {
          const { rows } = await run(`SELECT count(*) AS n FROM ${index.sql} WHERE ${where}`, params, 1);
          return { matchedRecords: Number(rows[0]?.['n'] ?? 0) };
        }
        const sparseValues = aliased<SparseValues>(body as Record<string, unknown>, 'sparseValues', 'sparse_values');
        const set = updateSet(index, { ...body, ...(sparseValues === undefined ? {} : { sparseValues }) }, params, metadataBytesMax);
        if (set === '') throw new SvcError(MALFORMED_REQUEST_CODE, 'update needs values, sparseValues or setMetadata', { reason: 'nothing_to_update' });
        const result = await run(`UPDATE ${index.sql} SET ${set} WHERE ${where}`, params, 1);
        return { matchedRecords: result.affectedRows ?? 0 };
      },
    );
  };
}
