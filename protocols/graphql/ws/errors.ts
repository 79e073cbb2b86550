/**
 * GraphQL errors of the WebSocket transport in svcdb's model: `extensions.code` is the SvcError
 * code (a resolver's, an auth failure's), INVALID_QUERY for syntax and validation errors, and
 * INTERNAL_ERROR (message hidden) for anything else.
 */
import type { ExecutionResult, FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { GraphQLError } from '../graphql-lib.js';
import { isSvcError, SvcError, type ErrorCode } from '../../../core/errors.js';

/** A GraphQLError carrying a SvcError (code and details in extensions). */
export function graphqlErrorOf(error: SvcError): GraphQLError {
  return new GraphQLError(error.message, { originalError: error, extensions: extensionsOf(error) });
}

function extensionsOf(error: SvcError): { code: ErrorCode; details?: Record<string, unknown> } {
  return Object.keys(error.details).length === 0 ? { code: error.code } : { code: error.code, details: jsonSafe(error.details) };
}

/** Details may hold bigints (sequences): carried as strings. */
function jsonSafe(details: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(details, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))) as Record<string, unknown>;
}

/** One error as sent, with its code. */
export function formatError(error: GraphQLError, onInternal?: (error: unknown) => void): GraphQLFormattedError {
  const original = error.originalError;
  const formatted = error.toJSON();
  if (isSvcError(original)) return { ...formatted, message: original.message, extensions: { ...formatted.extensions, ...extensionsOf(original) } };
  if (original === undefined || original instanceof GraphQLError) {
    const code = typeof formatted.extensions?.['code'] === 'string' ? formatted.extensions['code'] : 'INVALID_QUERY';
    return { ...formatted, extensions: { ...formatted.extensions, code } };
  }
  onInternal?.(original);
  return { ...formatted, message: 'internal error', extensions: { code: 'INTERNAL_ERROR' } };
}

/** A result as sent: its errors formatted. */
export function formatResult(result: ExecutionResult, onInternal?: (error: unknown) => void): FormattedExecutionResult {
  const { errors, ...rest } = result;
  return errors ? { ...rest, errors: errors.map((e) => formatError(e, onInternal)) } : rest;
}

/** Any thrown value as a SvcError (an unknown one is an internal error). */
export function svcErrorOf(error: unknown): SvcError {
  return isSvcError(error) ? error : new SvcError('INTERNAL_ERROR', 'internal error', {}, error);
}
