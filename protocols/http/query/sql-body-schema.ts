/** Limits of the SQL routes from config (core/settings.ts). */
export interface QueryRouteLimits {
  readonly queryTextBytesMax: number;
  readonly resultRowsMax: number;
  readonly queryTimeoutMsMax: number;
}

/** The spec's defaults for POST /query: timeout_ms 30000, max_rows 10000 (never above the maxima). */
export const TIMEOUT_MS_DEFAULT = 30_000;
export const MAX_ROWS_DEFAULT = 10_000;

/**
 * The JSON schema of a body carrying SQL (POST /query, /query/explain, /query/stream,
 * /query/async): sql, params and timeout_ms, bounded by config, plus the route's own `extra`
 * properties. Unknown fields are refused.
 */
export function sqlBodySchema(limits: QueryRouteLimits, extra: Record<string, object>, timeoutMsDefault = TIMEOUT_MS_DEFAULT) {
  return {
    type: 'object',
    required: ['sql'],
    additionalProperties: false,
    properties: {
      sql: { type: 'string', minLength: 1, maxLength: limits.queryTextBytesMax },
      params: { type: 'array' },
      timeout_ms: { type: 'integer', minimum: 1, maximum: limits.queryTimeoutMsMax, default: Math.min(timeoutMsDefault, limits.queryTimeoutMsMax) },
      ...extra,
    },
  } as const;
}

/** max_rows: at most max_result_rows, by default the spec's 10000 (or max_result_rows if lower). */
export function maxRowsProperty(limits: QueryRouteLimits): object {
  return { type: 'integer', minimum: 1, maximum: limits.resultRowsMax, default: Math.min(MAX_ROWS_DEFAULT, limits.resultRowsMax) };
}
