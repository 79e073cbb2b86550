import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { newUlid } from '../../../core/ids.js';
import type { ExecuteOptions, QueryResult, SqlEngine } from '../../../query/index.js';
import { engineScope } from '../../auth/principal.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { untilClientLeaves } from '../client-abort.js';
import { rowJson, rowsJson, sendJsonText } from '../json-reply.js';
import { replayKeptBody } from '../direct/kept-body.js';
import { ANSWER_FRAME } from './query-direct.js';
import { resultMetadataView } from './result-view.js';
import { maxRowsProperty, sqlBodySchema, type QueryRouteLimits } from './sql-body-schema.js';

export type { QueryRouteLimits } from './sql-body-schema.js';

interface QueryBody {
  sql: string;
  params?: unknown[];
  timeout_ms: number;
  include_metadata: boolean;
  max_rows: number;
}

function bodySchema(limits: QueryRouteLimits) {
  return sqlBodySchema(limits, { include_metadata: { type: 'boolean', default: false }, max_rows: maxRowsProperty(limits) });
}

/**
 * A point SELECT answered at once (SqlEngine.pointSelectText without metadata: the whole answer's text
 * kept with the row; SqlEngine.pointSelect with it: the rows as objects), reported to the metrics as
 * measured() would (timed from `started`, the request's start); undefined: the statement takes the
 * general path. Nothing to cancel: it never waits.
 */
function pointSelect(
  options: { engine: SqlEngine; metrics?: QueryMetrics },
  body: QueryBody,
  run: ExecuteOptions,
  started: number,
): QueryResult | string | undefined {
  let result: QueryResult | string | undefined;
  try {
    // With metadata the rows are sent as objects: the whole answer's text would be made for nothing.
    result = body.include_metadata ? options.engine.pointSelect(body.sql, run) : options.engine.pointSelectText(body.sql, run, rowJson, ANSWER_FRAME);
  } catch (error) {
    options.metrics?.observe({ database: run.tenant, durationSeconds: (performance.now() - started) / 1000, ok: false });
    throw error;
  }
  if (result !== undefined) options.metrics?.observe({ database: run.tenant, durationSeconds: (performance.now() - started) / 1000, ok: true });
  return result;
}

/**
 * A prepared INSERT (SqlEngine.preparedInsert) run and answered, reported to the metrics as
 * measured() would; undefined: the statement takes the general path. Not an async function: one
 * promise per insert (the engine's), not one per layer.
 */
function preparedInsert(
  options: { engine: SqlEngine; metrics?: QueryMetrics },
  reply: FastifyReply,
  body: QueryBody,
  run: ExecuteOptions,
  started: number,
): Promise<void> | undefined {
  const observe = (ok: boolean): void => options.metrics?.observe({ database: run.tenant, durationSeconds: (performance.now() - started) / 1000, ok });
  let pending: Promise<QueryResult> | undefined;
  try {
    pending = options.engine.preparedInsert(body.sql, run);
  } catch (error) {
    observe(false);
    return Promise.reject(error as Error);
  }
  return pending?.then(
    (result) => {
      observe(true);
      answer(reply, body, result, started);
    },
    (error: unknown) => {
      observe(false);
      throw error;
    },
  );
}

/** Sends a result in the spec's shape: the rows' JSON written at once unless metadata is asked for. */
function answer(reply: FastifyReply, body: QueryBody, result: QueryResult, started: number): void {
  // Without metadata the answer's JSON is written at once (json-reply.ts: the same text as serializing the object).
  if (!body.include_metadata) {
    sendJsonText(reply.code(200), `{"success":true,"data":${rowsJson(result.rows)}}`);
    return;
  }
  const metadata = resultMetadataView(result, { elapsedMs: performance.now() - started, queryId: newUlid() });
  reply.code(200).send({ success: true, data: result.rows, metadata });
}

/** POST /query (under /api/v1): runs SQL synchronously in the spec's result shape. */
export function queryRoutes(options: { engine: SqlEngine; limits: QueryRouteLimits; metrics?: QueryMetrics }): FastifyPluginAsync {
  const schema = { body: bodySchema(options.limits) };
  const general = async (reply: FastifyReply, body: QueryBody, run: ExecuteOptions, started: number): Promise<void> => {
    // A statement that never reads a signal (a prepared INSERT) went to preparedInsert: no AbortController per request.
    const result = await measured(options.metrics, run.tenant, () =>
      untilClientLeaves(reply, (signal) => options.engine.execute(body.sql, { ...run, signal })),
    );
    answer(reply, body, result, started);
  };
  return async (app) => {
    // Not an async handler: a point SELECT answered from the store is sent before the handler
    // returns (no promise, no turn of the event loop); every other statement returns its promise.
    // The direct path (protocols/http/direct) may have read the body already: replayKeptBody hands it to fastify.
    app.post<{ Body: QueryBody }>('/query', { schema, preParsing: replayKeptBody }, (request, reply) => {
      const started = performance.now();
      const body = request.body;
      // Field by field, not a spread of engineScope's object: a spread on a record made per request takes V8's slow path.
      const scope = engineScope(request);
      const run: ExecuteOptions = {
        params: body.params ?? [],
        timeoutMs: body.timeout_ms,
        maxRows: body.max_rows,
        tenant: scope.tenant,
        readOnly: scope.readOnly,
      };
      const point = pointSelect(options, body, run, started);
      if (point === undefined) return preparedInsert(options, reply, body, run, started) ?? general(reply, body, run, started);
      // Without metadata the whole answer came kept with the row (ANSWER_FRAME around rowJson's text of it).
      if (typeof point === 'string') sendJsonText(reply.code(200), point);
      else answer(reply, body, point, started);
      return undefined;
    });
  };
}
