/**
 * The one operating-error type of svcdb. Codes are stable (clients match on them); messages may
 * change. protocols/ maps each code to an HTTP status in exactly one table.
 */
export const ERROR_CODES = [
  // From the interface spec.
  'AUTHENTICATION_REQUIRED',
  'AUTHENTICATION_FAILED',
  'AUTHORIZATION_DENIED',
  'INVALID_QUERY',
  'TABLE_NOT_FOUND',
  'COLUMN_NOT_FOUND',
  'CONSTRAINT_VIOLATION',
  'TYPE_MISMATCH',
  'QUERY_TIMEOUT',
  'RATE_LIMIT_EXCEEDED',
  'TRANSACTION_CONFLICT',
  'INTERNAL_ERROR',
  // Added where the spec has no code (docs/errors.md says why each exists).
  'VALIDATION_ERROR',
  'NOT_FOUND',
  'PAYLOAD_TOO_LARGE',
  'NOT_READY',
  'STORAGE_UNAVAILABLE',
  'LOG_CORRUPT',
  'DATA_DIR_INVALID',
  'DATA_DIR_LOCKED',
  'CONFIG_INVALID',
  'LIMIT_EXCEEDED',
  'SHUTTING_DOWN',
  'INVALID_STATE',
  'TOO_MANY_CONNECTIONS',
  'REQUEST_TIMEOUT',
  // GraphQL (docs/graphql.md): a document that does not parse, or does not validate against the schema.
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Context for the client (`field`, `limit`, ...): write keys in snake_case, the wire's style (protocols/ converts any other). */
export type ErrorDetails = Record<string, unknown>;

export class SvcError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'SvcError';
    this.code = code;
    this.details = details;
  }
}

export function isSvcError(value: unknown): value is SvcError {
  return value instanceof SvcError;
}

// One factory per error that several layers raise, so its message and details are written once.

/** SHUTTING_DOWN: the server (or the part of it the caller reached, the log included) is closing. */
export function shuttingDown(): SvcError {
  return new SvcError('SHUTTING_DOWN', 'the server is shutting down; retry on another instance or after restart');
}

/** What a missing relation is called in its message: SQL says `relation` (PostgreSQL's word). */
export type RelationNoun = 'relation' | 'table' | 'view' | 'materialized view' | 'index';

/**
 * TABLE_NOT_FOUND for `name` as the request wrote it (schema-qualified when it was), e.g.
 * `relation "orders" does not exist`; an index is named in `details.index`, the rest in `details.table`.
 */
export function tableNotFound(name: string, options: { noun?: RelationNoun; details?: ErrorDetails } = {}): SvcError {
  const noun = options.noun ?? 'relation';
  const key = noun === 'index' ? 'index' : 'table';
  return new SvcError('TABLE_NOT_FOUND', `${noun} "${name}" does not exist`, { [key]: name, ...options.details });
}

/**
 * COLUMN_NOT_FOUND: `column "c" of relation "t" does not exist` when the table is known
 * (`relation`), `column "t.c" does not exist` for a reference qualified by `qualifier` (as the
 * query wrote it), `column "c" does not exist` otherwise (PostgreSQL's three wordings).
 */
export function columnNotFound(column: string, where: { relation?: string; qualifier?: string } = {}): SvcError {
  const table = where.relation ?? where.qualifier;
  const message =
    where.relation !== undefined
      ? `column "${column}" of relation "${where.relation}" does not exist`
      : `column "${where.qualifier === undefined ? '' : `${where.qualifier}.`}${column}" does not exist`;
  return new SvcError('COLUMN_NOT_FOUND', message, table === undefined ? { column } : { column, table });
}

/** Programmer errors: a broken invariant crashes instead of becoming a 4xx. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) fail(message);
}

/**
 * A broken invariant, found by a check of the caller's own (`if (bad) fail(...)`): on hot paths the
 * message is built only when the check fails, where `assert(ok, message)` builds it every call.
 */
export function fail(message: string): never {
  throw new Error(`assertion failed: ${message}`);
}
