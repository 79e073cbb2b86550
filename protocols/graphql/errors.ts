import { GraphQLError } from './graphql-lib.js';
import { isSvcError, type ErrorCode } from '../../core/errors.js';

/** A GraphQL error as sent: svcdb's stable code in extensions.code (details beside it). */
export interface FormattedError {
  readonly message: string;
  readonly locations?: readonly { line: number; column: number }[];
  readonly path?: readonly (string | number)[];
  readonly extensions: { readonly code: ErrorCode; readonly [key: string]: unknown };
}

/** What a request-level failure (nothing executed) is: how its errors are coded. */
export type RequestFailure = 'parse' | 'validation' | 'variables';

const FAILURE_CODE: Readonly<Record<RequestFailure, ErrorCode>> = Object.freeze({
  parse: 'GRAPHQL_PARSE_FAILED',
  validation: 'GRAPHQL_VALIDATION_FAILED',
  variables: 'VALIDATION_ERROR',
});

/** The code of an error thrown before execution (mercurius's MER_ERR_GQL_VALIDATION carries them in `errors`). */
export function failureOf(error: GraphQLError | Error): RequestFailure {
  if (error.message.startsWith('Syntax Error')) return 'parse';
  if (error.message.startsWith('Variable "')) return 'variables';
  return 'validation';
}

/**
 * One error in the response shape. An SvcError (from SQL or a resolver) keeps its code and
 * details; an error that already carries a code keeps it; anything else thrown by a resolver is
 * INTERNAL_ERROR with its message hidden (it may carry internals; the log has it).
 */
export function formatError(error: GraphQLError | Error, fallback?: ErrorCode): FormattedError {
  const graphql = error instanceof GraphQLError ? error : null;
  const original = graphql ? graphql.originalError : error;
  const located = {
    ...(graphql?.locations ? { locations: graphql.locations } : {}),
    ...(graphql?.path ? { path: graphql.path } : {}),
  };
  if (original && isSvcError(original)) {
    return {
      message: original.message,
      ...located,
      extensions: { code: original.code, ...(Object.keys(original.details).length ? { details: original.details } : {}) },
    };
  }
  const code = graphql?.extensions?.code;
  if (typeof code === 'string') return { message: error.message, ...located, extensions: { ...graphql!.extensions, code: code as ErrorCode } };
  // Thrown by code (a resolver's bug), not by GraphQL's own checks: hide the message.
  if (original && !(original instanceof GraphQLError) && graphql?.path) {
    return { message: 'internal error; the server log has the details', ...located, extensions: { code: 'INTERNAL_ERROR' } };
  }
  return { message: error.message, ...located, extensions: { code: fallback ?? FAILURE_CODE[failureOf(error)] } };
}

/** Every root query and mutation field is a table's: asking for one the schema lacks names a table that does not exist (or was dropped). */
const UNKNOWN_ROOT_FIELD = /^Cannot query field "[^"]+" on type "(Query|Mutation)"/;

/** The errors of a request that failed before execution, each with its code. */
export function formatRequestErrors(errors: readonly (GraphQLError | Error)[], depthMax: number): FormattedError[] {
  return errors.map((e) => {
    if ((e as { code?: string }).code === 'MER_ERR_GQL_QUERY_DEPTH') {
      const message = `${e.message.replaceAll('`', '')} (SVC_GRAPHQL_DEPTH_MAX)`;
      return { message, extensions: { code: 'LIMIT_EXCEEDED', details: { limit: 'depth', depth_max: depthMax } } };
    }
    return formatError(e, UNKNOWN_ROOT_FIELD.test(e.message) ? 'TABLE_NOT_FOUND' : FAILURE_CODE[failureOf(e)]);
  });
}
