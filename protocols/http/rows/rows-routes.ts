import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { SvcError } from '../../../core/errors.js';
import type { CatalogState, TableEntry } from '../../../projections/index.js';
import type { ExecuteOptions, JsonConflict, QueryResult, SqlEngine } from '../../../query/index.js';
import { engineScope, principalOf } from '../../auth/principal.js';
import { untilClientLeaves } from '../client-abort.js';
import { rowsJson, sendJsonText } from '../json-reply.js';
import { readPage, type RowsQuery } from './rows-page.js';
import { deleteRowsBody, insertRowsBody, listRowsQuery, rowsParams, updateRowsBody } from './rows-schemas.js';
import { deleteSql, filterSql, updateSql, type Statement } from './rows-sql.js';
import { TIMEOUT_MS_DEFAULT } from '../query/sql-body-schema.js';
import { findTable, tableRefOf, type TableRef } from '../tables/table-ref.js';

export interface RowRouteLimits {
  readonly queryTextBytesMax: number;
  readonly queryTimeoutMsMax: number;
  readonly resultRowsMax: number;
}

export interface RowRouteDeps {
  readonly engine: SqlEngine;
  /** The catalog as of the last applied write (projections.catalog). */
  readonly catalog: CatalogState;
  readonly limits: RowRouteLimits;
}

type TableRequest = FastifyRequest<{ Params: { table_name: string } }>;

/** The table of a row request (404 when the caller's tenant has none) and the engine options of the caller. */
export function rowTarget(deps: RowRouteDeps, request: TableRequest): { ref: TableRef; entry: TableEntry; options: ExecuteOptions } {
  const { ref, entry } = rowTable(deps, request);
  return { ref, entry, options: rowOptions(deps, request) };
}

/** The table of a row request (404 when the caller's tenant has none). */
export function rowTable(deps: RowRouteDeps, request: TableRequest): { ref: TableRef; entry: TableEntry } {
  const ref = tableRefOf(request.params.table_name);
  return { ref, entry: findTable(deps.catalog, principalOf(request).tenant, ref) };
}

/**
 * The engine options of a row request's caller (built only by a request that runs SQL). Fields
 * named one by one, always the same shape: a spread of engineScope()'s object took V8's generic
 * copy and made two shapes (with and without readOnly) that the engine then read.
 */
export function rowOptions(deps: RowRouteDeps, request: FastifyRequest): ExecuteOptions {
  const timeoutMs = Math.min(TIMEOUT_MS_DEFAULT, deps.limits.queryTimeoutMsMax);
  const scope = engineScope(request);
  return { timeoutMs, maxRows: deps.limits.resultRowsMax, tenant: scope.tenant, readOnly: scope.readOnly };
}

interface Envelope {
  row?: Record<string, unknown>;
  rows?: Record<string, unknown>[];
  returning?: string[];
  on_conflict?: { columns?: string[]; action: 'update' | 'nothing'; update_columns?: string[] };
}

type InsertBody = Envelope | Record<string, unknown> | Record<string, unknown>[];

/** The rows, returning and on_conflict of a POST rows body in any of its three forms (rows-schemas.ts). */
function insertRequestOf(body: InsertBody): { rows: Record<string, unknown>[]; returning: string[]; onConflict: JsonConflict | null } {
  if (Array.isArray(body)) return { rows: body, returning: [], onConflict: null };
  if (!('row' in body) && !('rows' in body)) return { rows: [body as Record<string, unknown>], returning: [], onConflict: null };
  const envelope = body as Envelope;
  if (envelope.row !== undefined && envelope.rows !== undefined) {
    throw new SvcError('VALIDATION_ERROR', 'send row (one row) or rows (several), not both', { field: 'rows', reason: 'schema_validation' });
  }
  const conflict = envelope.on_conflict;
  return {
    rows: envelope.rows ?? [envelope.row!],
    returning: envelope.returning ?? [],
    onConflict: conflict ? { columns: conflict.columns ?? [], action: conflict.action, updateColumns: conflict.update_columns ?? null } : null,
  };
}

/** The answer of one row inserted without RETURNING (POST rows' usual answer): one flat string for every such request. */
const ONE_INSERTED = '{"success":true,"inserted_count":1,"data":[]}';

/** POST rows' answer, written as text (json-reply.ts): the bytes serializing { success, inserted_count, data } gives, without that step. */
function insertAnswer(result: QueryResult): string {
  if (result.affectedRows === 1 && result.rows.length === 0) return ONE_INSERTED;
  return `{"success":true,"inserted_count":${result.affectedRows ?? 0},"data":${rowsJson(result.rows)}}`;
}

/** PUT and DELETE name the rows they change: no filter is refused, every row is `filter: "true"`. */
function requiredFilter(filter: string | undefined, verb: string, textBytesMax: number): Statement {
  if (filter === undefined || filter.trim() === '') {
    throw new SvcError('INVALID_QUERY', `filter is required to ${verb} rows; to ${verb} every row say so with filter "true"`, {
      field: 'filter',
      reason: 'filter_required',
    });
  }
  return { sql: filterSql(filter, textBytesMax), params: [] };
}

type TableParams = { Params: { table_name: string } };

/** GET, POST, PUT and DELETE /tables/{table_name}/rows (under /api/v1). */
export function rowsRoutes(deps: RowRouteDeps): FastifyPluginAsync {
  const { engine, limits } = deps;
  const textBytesMax = limits.queryTextBytesMax;
  return async (app) => {
    app.get<TableParams & { Querystring: RowsQuery }>(
      '/tables/:table_name/rows',
      { schema: { params: rowsParams, querystring: listRowsQuery(textBytesMax) } },
      async (request, reply) => {
        // total_count comes from the table's stats: wait for every write answered so far first, then read the entry.
        const settled = engine.settled();
        if (settled !== undefined) await settled;
        const { ref, entry, options } = rowTarget(deps, request);
        return untilClientLeaves(reply, (signal) => readPage(engine, entry, ref, request.query, { ...options, signal, textBytesMax }));
      },
    );

    app.post<TableParams & { Body: InsertBody }>(
      '/tables/:table_name/rows',
      { schema: { params: rowsParams, body: insertRowsBody } },
      // Not an async handler: the engine's promise with one then(), no promise and frame of its own
      // per insert. What throws before it (no such table, row and rows both) is fastify's to answer,
      // as a rejection would be.
      (request, reply) => {
        const { ref, options } = rowTarget(deps, request);
        const { rows, returning, onConflict } = insertRequestOf(request.body);
        // Named field by field (no spread): one shape for every request's insert.
        return engine
          .insertJson({ schema: ref.schema, table: ref.name, rows, returning, onConflict }, options)
          .then((result) => sendJsonText(reply.code(201), insertAnswer(result)));
      },
    );

    app.put<TableParams & { Body: { filter?: string; updates: Record<string, unknown>; returning?: string[] } }>(
      '/tables/:table_name/rows',
      { schema: { params: rowsParams, body: updateRowsBody(textBytesMax) } },
      async (request) => {
        const { ref, entry, options } = rowTarget(deps, request);
        const body = request.body;
        const statement = updateSql(ref, entry.def, body.updates, requiredFilter(body.filter, 'update', textBytesMax), body.returning);
        const result = await engine.execute(statement.sql, { ...options, params: statement.params });
        return { success: true, affected_rows: result.affectedRows ?? 0, data: result.rows };
      },
    );

    app.delete<TableParams & { Body: { filter?: string; returning?: string[] } }>(
      '/tables/:table_name/rows',
      {
        schema: { params: rowsParams, body: deleteRowsBody(textBytesMax) },
        // No body at all is an empty one: the handler then says that a filter is required.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request) => {
        const { ref, entry, options } = rowTarget(deps, request);
        const body = request.body;
        const statement = deleteSql(ref, entry.def, requiredFilter(body.filter, 'delete', textBytesMax), body.returning);
        const result = await engine.execute(statement.sql, { ...options, params: statement.params });
        return { success: true, deleted_count: result.affectedRows ?? 0, data: result.rows };
      },
    );
  };
}
