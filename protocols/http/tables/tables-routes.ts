import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DEFAULT_SCHEMA } from '../../../core/catalog.js';
import { SvcError, isSvcError } from '../../../core/errors.js';
import type { CatalogState, TableEntry } from '../../../projections/index.js';
import type { ExecuteOptions, SqlEngine } from '../../../query/index.js';
import { engineScope, principalOf } from '../../auth/principal.js';
import { isSystemTable } from '../../system-tables.js';
import { TIMEOUT_MS_DEFAULT } from '../query/sql-body-schema.js';
import { alterStatements, createTableStatements, type AlterOperation, type CreateTableBody } from './table-ddl.js';
import { findTable, isoOfMicros, qualified, tableRefOf, type TableRef } from './table-ref.js';
import { alterTableSchema, createTableSchema, dropTableQuery, listTablesQuery, tableParams } from './table-schemas.js';
import { likeMatcher, tableDetail, tableSummary } from './table-view.js';

export interface TableRouteLimits {
  readonly queryTextBytesMax: number;
  readonly queryTimeoutMsMax: number;
}

export interface TableRouteDeps {
  readonly engine: SqlEngine;
  /** The catalog as of the last applied write (projections.catalog). */
  readonly catalog: CatalogState;
  readonly limits: TableRouteLimits;
}

interface ListQuery {
  schema?: string;
  pattern?: string;
  include_views: boolean;
  include_system: boolean;
  limit: number;
  offset: number;
}

type NameParams = { table_name: string };

/** The caller's tables, views included unless asked otherwise, system tables only when asked, in (schema, name) order. */
function listTables(catalog: CatalogState, tenant: string, query: ListQuery): TableEntry[] {
  const matches = query.pattern === undefined ? () => true : likeMatcher(query.pattern);
  return [...catalog.tables()]
    .filter((e) => e.def.tenant === tenant && (query.schema === undefined || e.def.schema === query.schema))
    .filter((e) => (query.include_views || e.def.kind === 'table') && (query.include_system || !isSystemTable(e.def.schema, e.def.name)) && matches(e.def.name))
    .sort((a, b) => (a.def.schema === b.def.schema ? cmp(a.def.name, b.def.name) : cmp(a.def.schema, b.def.schema)));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** An error of statement k of a batch, said in the request's terms (which index or operation failed). */
function inRequestTerms(error: unknown, field: (statementIndex: number) => Record<string, unknown>): unknown {
  if (!isSvcError(error) || typeof error.details.statement_index !== 'number') return error;
  const { statement_index: at, ...details } = error.details;
  return new SvcError(error.code, error.message, { ...details, ...field(at as number) }, error);
}

const alreadyExists = (error: unknown): boolean => isSvcError(error) && error.details.reason === 'already_exists';

/**
 * GET/POST /tables, GET/PATCH/DELETE /tables/{table_name} (under /api/v1). DDL goes through the
 * engine as SQL (its validation, log path, tenant and role); reads come from the catalog.
 */
export function tablesRoutes(deps: TableRouteDeps): FastifyPluginAsync {
  const { engine, catalog, limits } = deps;
  const options = (request: FastifyRequest): ExecuteOptions => ({
    timeoutMs: Math.min(TIMEOUT_MS_DEFAULT, limits.queryTimeoutMsMax),
    maxRows: 1,
    ...engineScope(request),
  });
  const tenantOf = (request: FastifyRequest): string => principalOf(request).tenant;
  const created = (entry: TableEntry) => ({ name: entry.def.name, schema: entry.def.schema, created_at: isoOfMicros(entry.def.createdAtMicros) });

  return async (app) => {
    // Row counts and sizes come from the catalog's stats, updated as writes are applied: both GETs wait
    // for every write answered so far (engine.settled()) before they read the catalog.
    app.get<{ Querystring: ListQuery }>('/tables', { schema: { querystring: listTablesQuery } }, async (request) => {
      const settled = engine.settled();
      if (settled !== undefined) await settled;
      const query = request.query;
      const all = listTables(catalog, tenantOf(request), query);
      return { tables: all.slice(query.offset, query.offset + query.limit).map(tableSummary), total_count: all.length };
    });

    app.get<{ Params: NameParams }>('/tables/:table_name', { schema: { params: tableParams } }, async (request) => {
      const settled = engine.settled();
      if (settled !== undefined) await settled;
      return tableDetail(findTable(catalog, tenantOf(request), tableRefOf(request.params.table_name)), new Date());
    });

    app.post<{ Body: CreateTableBody }>('/tables', { schema: { body: createTableSchema(limits.queryTextBytesMax) } }, async (request, reply) => {
      const body = request.body;
      const ref: TableRef = { schema: body.schema ?? DEFAULT_SCHEMA, name: body.name };
      const existing = catalog.tableByName(tenantOf(request), ref.schema, ref.name);
      if (existing && body.if_not_exists) return reply.code(200).send({ success: true, created: false, table: created(existing) });
      try {
        await engine.executeDdlBatch(createTableStatements(ref, body, limits), options(request));
      } catch (error) {
        const now = catalog.tableByName(tenantOf(request), ref.schema, ref.name);
        if (body.if_not_exists && now && alreadyExists(error)) return reply.code(200).send({ success: true, created: false, table: created(now) });
        throw inRequestTerms(error, (at) => (at === 0 ? {} : { index: at - 1, field: `indexes.${at - 1}` }));
      }
      return reply.code(201).send({ success: true, created: true, table: created(findTable(catalog, tenantOf(request), ref)) });
    });

    app.patch<{ Params: NameParams; Body: { operations: AlterOperation[] } }>(
      '/tables/:table_name',
      { schema: { params: tableParams, body: alterTableSchema(limits.queryTextBytesMax) } },
      async (request) => {
        const ref = tableRefOf(request.params.table_name);
        const entry = findTable(catalog, tenantOf(request), ref);
        if (entry.def.kind !== 'table')
          throw new SvcError('INVALID_QUERY', `"${entry.def.name}" is a ${entry.def.kind}: PATCH alters tables`, { table: entry.def.name });
        const operations = request.body.operations;
        try {
          await engine.executeDdlBatch(alterStatements(ref, operations, limits), options(request));
        } catch (error) {
          // All or nothing: one log record holds every operation, so none of them happened.
          throw inRequestTerms(error, (at) => ({ operation_index: at, operation: operations[at]?.operation, operations_completed: 0 }));
        }
        const after = findTable(catalog, tenantOf(request), ref);
        return { success: true, operations_completed: operations.length, table: { name: after.def.name, updated_at: isoOfMicros(after.def.updatedAtMicros) } };
      },
    );

    app.delete<{ Params: NameParams; Querystring: { cascade: boolean; if_exists: boolean } }>(
      '/tables/:table_name',
      { schema: { params: tableParams, querystring: dropTableQuery } },
      async (request) => {
        const ref = tableRefOf(request.params.table_name);
        const { cascade, if_exists: ifExists } = request.query;
        const entry = catalog.tableByName(tenantOf(request), ref.schema, ref.name);
        if (!entry && ifExists) return { success: true, table: ref.name, dropped: false, dropped_at: null };
        if (!entry) findTable(catalog, tenantOf(request), ref);
        const kind = entry!.def.kind.replace('_', ' ').toUpperCase();
        await engine.execute(`DROP ${kind} ${ifExists ? 'IF EXISTS ' : ''}${qualified(ref)}${cascade ? ' CASCADE' : ''}`, options(request));
        return { success: true, table: ref.name, dropped: true, dropped_at: new Date().toISOString() };
      },
    );
  };
}
