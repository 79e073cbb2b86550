import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { SvcError } from '../../../core/errors.js';
import type { TableDef } from '../../../core/catalog.js';
import type { AnswerWrap } from '../../../query/index.js';
import { untilClientLeaves } from '../client-abort.js';
import { rowJson, sendJsonText } from '../json-reply.js';
import type { TableRef } from '../tables/table-ref.js';
import { idParts } from './row-id.js';
import { rowOptions, rowTable, rowTarget, type RowRouteDeps } from './rows-routes.js';
import { patchRowBody, rowParams, rowQuery } from './rows-schemas.js';
import { deleteSql, keySql, selectByKeySql, selectColumns, updateSql, type Statement } from './rows-sql.js';

type RowRequest = { Params: { table_name: string; id: string } };

/** The WHERE of one row by its primary key, read from the raw URL (row-id.ts). */
function keyOf(table: TableDef, request: FastifyRequest): { key: Statement; parts: string[] } {
  const parts = idParts(table, request.raw.url ?? request.url);
  return { key: keySql(table, parts), parts };
}

function rowNotFound(table: TableDef, parts: readonly string[]): SvcError {
  return new SvcError('NOT_FOUND', `no row of "${table.name}" has id ${parts.join(',')}`, { table: table.name, id: parts });
}

/** The whole answer to a GET of one row, `{"data":<row>}`: the same text as serializing `{ data: row }` (json-reply.ts rowJson). */
export const rowAnswerJson = (row: Readonly<Record<string, unknown>>): string => `{"data":${rowJson(row)}}`;

/**
 * rowAnswerJson's text around the row's, for the point-read cache: it keeps the whole answer with the
 * row (query/point-read.ts readText), so a row read again is sent as it is — no answer string built
 * around the row's text per request, and once sent a flat string (node measures and writes it as one
 * piece). The row's text (rowJson) is made once and shared with POST /query's point SELECT of the same
 * columns (query/row-shapes.ts): a row one route read is not decoded nor written again by the other.
 */
export const ROW_ANSWER_WRAP: AnswerWrap = Object.freeze({ before: '{"data":', after: '}' });

/** What a GET of one row asked for: the SQL path needs it when the direct read cannot answer. */
interface RowAsked {
  readonly ref: TableRef;
  readonly def: TableDef;
  readonly parts: string[];
  readonly columns: readonly string[];
}

/**
 * Sends the direct read's answer text (then returns undefined: answered, nothing to wait for) or
 * 404; where only SQL answers exactly, runs it (the promise settles once it has answered).
 */
function answerRow(
  deps: RowRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  asked: RowAsked,
  direct: string | null | undefined,
): Promise<void> | undefined {
  if (direct === null) throw rowNotFound(asked.def, asked.parts);
  if (direct === undefined) return rowBySql(deps, request, reply, asked);
  sendJsonText(reply, direct);
  return undefined;
}

async function rowBySql(deps: RowRouteDeps, request: FastifyRequest, reply: FastifyReply, asked: RowAsked): Promise<void> {
  const { ref, def, parts, columns } = asked;
  const statement = selectByKeySql(ref, columns, keySql(def, parts));
  const options = rowOptions(deps, request);
  const result = await untilClientLeaves(reply, (signal) => deps.engine.execute(statement.sql, { ...options, params: statement.params, maxRows: 1, signal }));
  if (result.rows.length === 0) throw rowNotFound(def, parts);
  sendJsonText(reply, rowAnswerJson(result.rows[0]!));
}

/** GET, PATCH and DELETE /tables/{table_name}/rows/{id} (under /api/v1): one row by primary key. */
export function rowRoutes(deps: RowRouteDeps): FastifyPluginAsync {
  const { engine } = deps;
  return async (app) => {
    app.get<RowRequest & { Querystring: { select?: string } }>(
      '/tables/:table_name/rows/:id',
      { schema: { params: rowParams, querystring: rowQuery } },
      (request, reply) => {
        // The engine options only where SQL runs: the direct read needs the table alone.
        const { ref, entry } = rowTable(deps, request);
        const parts = idParts(entry.def, request.raw.url ?? request.url);
        const columns = selectColumns(entry.def, request.query.select);
        // One store read, no SQL text or plan (query/point-read.ts); the SQL path answers what it cannot.
        // The whole answer's JSON text (rowAnswerJson's) comes kept with the cached row: a row read again
        // is not decoded nor written again.
        const read = engine.readTextByKey({ table: entry.def, key: parts, columns }, rowJson, ROW_ANSWER_WRAP);
        const asked: RowAsked = { ref, def: entry.def, parts, columns };
        // Not an async handler: where the store reads synchronously the answer is sent before the
        // handler returns, and nothing is left to wait for (no promise, no turn of the event loop).
        if (read instanceof Promise) return read.then((direct) => answerRow(deps, request, reply, asked, direct));
        return answerRow(deps, request, reply, asked, read);
      },
    );

    app.patch<RowRequest & { Body: { updates: Record<string, unknown>; returning?: string[] } }>(
      '/tables/:table_name/rows/:id',
      { schema: { params: rowParams, body: patchRowBody } },
      async (request) => {
        const { ref, entry, options } = rowTarget(deps, request);
        const { key, parts } = keyOf(entry.def, request);
        const statement = updateSql(ref, entry.def, request.body.updates, key, request.body.returning);
        const result = await engine.execute(statement.sql, { ...options, params: statement.params });
        if (!result.affectedRows) throw rowNotFound(entry.def, parts);
        return { success: true, data: result.rows[0] ?? {} };
      },
    );

    app.delete<RowRequest>('/tables/:table_name/rows/:id', { schema: { params: rowParams } }, async (request) => {
      const { ref, entry, options } = rowTarget(deps, request);
      const { key, parts } = keyOf(entry.def, request);
      const statement = deleteSql(ref, entry.def, key, undefined);
      const result = await engine.execute(statement.sql, { ...options, params: statement.params });
      if (!result.affectedRows) throw rowNotFound(entry.def, parts);
      return { success: true, deleted: true };
    });
  };
}
