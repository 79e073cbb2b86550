/**
 * One operation of a WebSocket connection, whichever protocol carried it: re-check the
 * credential, resolve the principal's schema, parse, validate, check the role (a read_only
 * credential may query and subscribe, not mutate), then run it with graphql-js (`subscribe` for a
 * subscription: its resolvers return the change feed's and live queries' async iterables).
 */
import type { DocumentNode, ExecutionArgs, ExecutionResult, GraphQLSchema, ValidationRule } from 'graphql';
import { execute, getOperationAST, GraphQLError, parse, specifiedRules, subscribe, validate } from '../graphql-lib.js';
import { SvcError } from '../../../core/errors.js';
import type { AuthGate } from '../../auth/authenticate.js';
import type { Principal } from '../../auth/principal.js';
import { authenticateWs, type ConnectionCredentials } from './auth.js';
import { graphqlErrorOf, svcErrorOf } from './errors.js';

/** A principal's schema and the context its resolvers get (the per-tenant schema of protocols/graphql). */
export interface ResolvedSchema {
  readonly schema: GraphQLSchema;
  readonly contextValue: unknown;
  /** Rules checked beside graphql-js's own (the limits the HTTP side checks: cost, introspection). */
  readonly validationRules?: readonly ValidationRule[];
  /** Runs a query or mutation (default graphql-js execute): the tenant schema commits a mutation's transaction here. */
  readonly execute?: (args: ExecutionArgs) => Promise<ExecutionResult>;
  /** Runs a subscription (default graphql-js subscribe). */
  readonly subscribe?: (args: ExecutionArgs) => Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult>;
}

/** The schema each prepared operation was resolved with (graphql-ws hands runOperation the same object). */
const RESOLVED = new WeakMap<ExecutionArgs, ResolvedSchema>();

/** Resolves the schema of a principal; called per operation, so DDL committed since is seen. */
export type SchemaResolver = (principal: Principal) => Promise<ResolvedSchema>;

/** A subscribe / start message's payload. */
export interface OperationPayload {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

export interface OperationDeps {
  readonly gate: AuthGate;
  readonly resolveSchema: SchemaResolver;
}

/** The execution arguments of an operation, or the errors that refuse it. */
export async function prepareOperation(
  deps: OperationDeps,
  credentials: ConnectionCredentials,
  payload: OperationPayload,
): Promise<ExecutionArgs | readonly GraphQLError[]> {
  let principal: Principal;
  let resolved: ResolvedSchema;
  try {
    principal = await authenticateWs(deps.gate, credentials);
    resolved = await deps.resolveSchema(principal);
  } catch (error) {
    return [graphqlErrorOf(svcErrorOf(error))];
  }
  if (typeof payload.query !== 'string' || payload.query === '') return [invalid('the operation has no query text')];
  let document: DocumentNode;
  try {
    document = parse(payload.query);
  } catch (error) {
    return [error instanceof GraphQLError ? coded(error, 'GRAPHQL_PARSE_FAILED') : invalid(String(error))];
  }
  const errors = validate(resolved.schema, document, resolved.validationRules ? [...specifiedRules, ...resolved.validationRules] : undefined);
  if (errors.length > 0) return errors.map((e) => coded(e, 'GRAPHQL_VALIDATION_FAILED'));
  const operationName = typeof payload.operationName === 'string' ? payload.operationName : undefined;
  const operation = getOperationAST(document, operationName);
  if (!operation) return [invalid(operationName ? `no operation named ${operationName}` : 'several operations: name one with operationName')];
  if (!resolved.schema.getRootType(operation.operation)) {
    // A tenant without tables has no Subscription (nor Mutation) root: refused as POST refuses an unknown root.
    return [
      coded(new GraphQLError(`the schema has no ${operation.operation} fields (no table of this tenant)`, { nodes: [operation] }), 'GRAPHQL_VALIDATION_FAILED'),
    ];
  }
  if (operation.operation === 'mutation' && principal.role === 'read_only') {
    return [graphqlErrorOf(new SvcError('AUTHORIZATION_DENIED', 'the read_only role may not run mutations', { role: principal.role }))];
  }
  const variables = payload.variables;
  const variableValues = typeof variables === 'object' && variables !== null && !Array.isArray(variables) ? (variables as Record<string, unknown>) : undefined;
  const args: ExecutionArgs = { schema: resolved.schema, document, operationName, variableValues, contextValue: resolved.contextValue };
  RESOLVED.set(args, resolved);
  return args;
}

/** The error with a code, unless it has one (a limit's LIMIT_EXCEEDED): the codes POST /graphql gives. */
function coded(error: GraphQLError, code: 'GRAPHQL_PARSE_FAILED' | 'GRAPHQL_VALIDATION_FAILED'): GraphQLError {
  if (typeof error.extensions['code'] === 'string') return error;
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, extensions: { ...error.extensions, code } });
}

function invalid(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'INVALID_QUERY' } });
}

/** Whether the prepared operation is a subscription (a stream of results). */
export function isSubscription(args: ExecutionArgs): boolean {
  return getOperationAST(args.document, args.operationName)?.operation === 'subscription';
}

/** Runs a prepared operation: a stream of results for a subscription, one result otherwise. */
export async function runOperation(args: ExecutionArgs): Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  const resolved = RESOLVED.get(args);
  if (isSubscription(args)) return resolved?.subscribe ? resolved.subscribe(args) : subscribe(args);
  return resolved?.execute ? resolved.execute(args) : execute(args);
}
