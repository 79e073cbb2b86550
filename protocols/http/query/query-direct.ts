import type { ExecuteOptions, RowsFrame, SqlEngine } from '../../../query/index.js';
import type { CredentialMemo } from '../../auth/authenticate.js';
import { rowJson } from '../json-reply.js';
import { MAX_ROWS_DEFAULT, TIMEOUT_MS_DEFAULT, type QueryRouteLimits } from './sql-body-schema.js';

/**
 * The answer around a point SELECT's rows without metadata: the point-read cache then keeps the whole
 * answer text with the row (query/fast-point.ts), sent as it is (no string built around it per request).
 * One object for the route and the direct path: the text kept is the one frame's.
 */
export const ANSWER_FRAME: RowsFrame = Object.freeze({ before: '{"success":true,"data":', after: '}' });

/** A whole number in [1, max], as the route's schema's `integer` with those bounds accepts it. */
const inRange = (value: unknown, max: number): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max;

/**
 * POST /query on the direct path (protocols/http/direct/direct-lane.ts): a point SELECT the engine
 * answers at once (SqlEngine.pointSelectText), without metadata, as the route answers it; undefined
 * for anything else, which the route answers (other statements, include_metadata, a body its schema
 * refuses or whose defaults it would fill in differently). The body is the route's
 * (sql-body-schema.ts): only what that schema accepts unchanged is taken here — sql of 1 to
 * queryTextBytesMax characters, params an array, timeout_ms and max_rows in range, include_metadata
 * false, nothing else — and the defaults are the schema's. The body is only read (fastify may
 * validate the same object afterwards). Throws where the route would answer an error.
 */
export function directQuery(engine: SqlEngine, limits: QueryRouteLimits): (caller: CredentialMemo, body: Record<string, unknown>) => string | undefined {
  const timeoutMsDefault = Math.min(TIMEOUT_MS_DEFAULT, limits.queryTimeoutMsMax);
  const maxRowsDefault = Math.min(MAX_ROWS_DEFAULT, limits.resultRowsMax);
  return (caller, body) => {
    for (const key in body) {
      if (key !== 'sql' && key !== 'params' && key !== 'timeout_ms' && key !== 'max_rows' && key !== 'include_metadata') return undefined;
    }
    const { sql, params, timeout_ms: timeoutMs, max_rows: maxRows, include_metadata: metadata } = body;
    // UTF-16 units are at least as many as code points (what the schema's maxLength counts): within it, surely valid.
    if (typeof sql !== 'string' || sql.length === 0 || sql.length > limits.queryTextBytesMax) return undefined;
    if (params !== undefined && !Array.isArray(params)) return undefined;
    if (timeoutMs !== undefined && !inRange(timeoutMs, limits.queryTimeoutMsMax)) return undefined;
    if (maxRows !== undefined && !inRange(maxRows, limits.resultRowsMax)) return undefined;
    if (metadata !== undefined && metadata !== false) return undefined;
    const principal = caller.home;
    // The route's options, field by field in its order (one shape for the engine to read).
    const run: ExecuteOptions = {
      params: (params as unknown[] | undefined) ?? [],
      timeoutMs: (timeoutMs as number | undefined) ?? timeoutMsDefault,
      maxRows: (maxRows as number | undefined) ?? maxRowsDefault,
      tenant: principal.tenant,
      readOnly: principal.role === 'read_only' ? 'role' : undefined,
    };
    return engine.pointSelectText(sql, run, rowJson, ANSWER_FRAME);
  };
}
