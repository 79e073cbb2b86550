import type { FastifyRequest } from 'fastify';
import { SvcError } from '../../core/errors.js';
import { isJsonNull } from '../../core/json-exact.js';
import type { SqlEngine } from '../../query/index.js';
import { engineScope } from '../auth/principal.js';
import { vectorTimeoutMs, type VectorLimits } from '../vectors/limits.js';
import type { VectorCatalog } from '../vectors/vector-table.js';
import { findIndex, listIndexes, type VectorIndex } from './index-store.js';

export interface DataPlaneDeps {
  readonly engine: SqlEngine;
  readonly catalog: VectorCatalog;
  readonly limits: VectorLimits;
}

/** "" and "__default__" are the same namespace (Pinecone's two names for the default one); stored as "". */
export const DEFAULT_NAMESPACE_NAME = '__default__';
export const namespaceOf = (namespace: string | undefined | null): string =>
  namespace === undefined || namespace === null || namespace === DEFAULT_NAMESPACE_NAME ? '' : namespace;

export interface SparseValues {
  indices: number[];
  values: number[];
}

export type Run = (sql: string, params: unknown[], maxRows?: number) => Promise<{ rows: Record<string, unknown>[]; affectedRows: number | null }>;

/** The index of a data-plane route (/indexes/:index_name/...) and the engine bound to the caller's scope. */
export function indexRequest(deps: DataPlaneDeps, request: FastifyRequest<{ Params: { index_name: string } }>): { index: VectorIndex; run: Run; search: Run } {
  const { tenant, readOnly } = engineScope(request);
  const index = findIndex(deps.catalog, tenant, request.params.index_name);
  const timeoutMs = vectorTimeoutMs(deps.limits);
  // The options in one shape, field by field (a spread of the scope per request takes V8's slow path).
  const run: Run = (sql, params, maxRows = deps.limits.resultRowsMax) => deps.engine.execute(sql, { params, timeoutMs, maxRows, tenant, readOnly });
  // A plain top-k goes straight to the index (query/fast-vector.ts); anything else through the executor.
  const search: Run = (sql, params, maxRows = deps.limits.resultRowsMax) => {
    const options = { params, timeoutMs, maxRows, tenant, readOnly };
    return deps.engine.vectorSelect(sql, options) ?? deps.engine.execute(sql, options);
  };
  return { index, run, search };
}

/**
 * The index of a route at the protocol's root (the spec's POST /upsert, which names no index in
 * its path): the body's `index`, else the tenant's only index — a spec client pointed at a
 * vector_base_url of one index needs no more; with none or several, 422 asks for the name.
 */
export function rootIndexRequest(deps: DataPlaneDeps, request: FastifyRequest, name: string | undefined): { index: VectorIndex; run: Run } {
  if (name !== undefined) return scopedIndex(deps, request, name);
  const indexes = listIndexes(deps.catalog, engineScope(request).tenant);
  if (indexes.length === 0) throw new SvcError('NOT_FOUND', 'there is no index to upsert into: create one with POST /indexes', { reason: 'no_index' });
  if (indexes.length > 1) {
    throw new SvcError('VALIDATION_ERROR', `name the index in the body's index field: there are ${indexes.length} indexes to choose from`, {
      field: 'index',
      reason: 'index_required',
    });
  }
  return scopedIndex(deps, request, indexes[0]!.name);
}

function scopedIndex(deps: DataPlaneDeps, request: FastifyRequest, name: string): { index: VectorIndex; run: Run } {
  const scope = engineScope(request);
  const index = findIndex(deps.catalog, scope.tenant, name);
  const timeoutMs = vectorTimeoutMs(deps.limits);
  const run: Run = (sql, params, maxRows = deps.limits.resultRowsMax) => deps.engine.execute(sql, { params, timeoutMs, maxRows, ...scope });
  return { index, run };
}

export const indexParams = { type: 'object', required: ['index_name'], properties: { index_name: { type: 'string', minLength: 1, maxLength: 45 } } };

export const sparseSchema = {
  type: 'object',
  required: ['indices', 'values'],
  additionalProperties: false,
  properties: {
    indices: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 4_294_967_295 } },
    values: { type: 'array', items: { type: 'number' } },
  },
};

export function checkValues(index: VectorIndex, values: readonly number[], field: string): void {
  if (values.length !== index.dimension) {
    throw new SvcError('VALIDATION_ERROR', `Vector dimension ${values.length} does not match the dimension of the index ${index.dimension}`, {
      field,
      expected: index.dimension,
      actual: values.length,
    });
  }
}

export function checkSparse(sparse: SparseValues | undefined, field: string): void {
  if (sparse !== undefined && sparse.indices.length !== sparse.values.length) {
    throw new SvcError('VALIDATION_ERROR', `${field}: indices and values must have the same length`, { field });
  }
}

/** A stored record in Pinecone's shape (values and metadata only when asked for). */
export function recordOf(row: Record<string, unknown>, withValues: boolean, withMetadata: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { id: row['id'] };
  if (withValues) out['values'] = row['values'] ?? [];
  // A JSON null document (JSON_NULL in engine rows) is left out, as SQL NULL is.
  if (withValues && !isJsonNull(row['sparse_values'] ?? null)) out['sparseValues'] = row['sparse_values'];
  if (withMetadata && !isJsonNull(row['metadata'] ?? null)) out['metadata'] = row['metadata'];
  return out;
}
