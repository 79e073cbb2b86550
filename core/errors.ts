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

/** Programmer errors: a broken invariant crashes instead of becoming a 4xx. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}
