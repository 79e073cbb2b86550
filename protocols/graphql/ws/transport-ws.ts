/**
 * The graphql-transport-ws protocol (graphql-ws 6's `makeServer`): connection_init is
 * authenticated (a bad credential closes with 4401 or 4403), each subscribe prepared by
 * operation.ts and run by graphql-js, errors formatted with svcdb's codes.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ExecutionArgs, GraphQLError } from 'graphql';
import { GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from '../graphql-lib.js';
import { makeServer } from 'graphql-ws';
import { SvcError } from '../../../core/errors.js';
import { authenticateWs, closeCodeOf, closeReasonOf, credentialsOf, type ConnectionCredentials } from './auth.js';
import { formatError, formatResult, graphqlErrorOf, svcErrorOf } from './errors.js';
import { prepareOperation, runOperation, type OperationDeps } from './operation.js';
import type { BoundedSocket } from './socket.js';

/** Per connection: its socket, upgrade request and, once initialised, its credentials. */
export interface TransportExtra {
  readonly socket: BoundedSocket;
  readonly headers: IncomingHttpHeaders;
  readonly ip: string;
  credentials: ConnectionCredentials | null;
  /** graphql-ws's context of the connection, once initialised (its running operations are counted from it). */
  context: { readonly subscriptions: Record<string, unknown> } | null;
}

export interface TransportDeps extends OperationDeps {
  readonly subscriptionsPerConnectionMax: number;
  readonly connectionInitTimeoutMs: number;
  readonly onInternalError: (error: unknown) => void;
}

/** A connection's operations running now (subscriptions and queries in flight). */
export function runningOperations(extra: TransportExtra): number {
  return extra.context ? Object.keys(extra.context.subscriptions).length : 0;
}

/** Serves graphql-transport-ws connections; `open` takes each connection and returns its end (call on close). */
export function graphqlTransportWs(deps: TransportDeps): {
  open(socket: BoundedSocket, extra: TransportExtra): (code: number, reason: string) => Promise<void>;
} {
  const server = makeServer<Record<string, unknown>, TransportExtra>({
    connectionInitWaitTimeout: deps.connectionInitTimeoutMs,
    onConnect: async (ctx) => {
      const credentials = credentialsOf(ctx.connectionParams, ctx.extra.headers, ctx.extra.ip);
      try {
        await authenticateWs(deps.gate, credentials);
      } catch (error) {
        const failure = svcErrorOf(error);
        // Closed here with the code of the failure; graphql-ws's own 4403 after it is a no-op.
        ctx.extra.socket.close(closeCodeOf(failure), closeReasonOf(failure));
        return false;
      }
      ctx.extra.credentials = credentials;
      ctx.extra.context = ctx;
      return true;
    },
    onSubscribe: async (ctx, _id, payload) => {
      if (runningOperations(ctx.extra) > deps.subscriptionsPerConnectionMax) {
        const max = deps.subscriptionsPerConnectionMax;
        return refused([
          graphqlErrorOf(
            new SvcError('LIMIT_EXCEEDED', `a connection may run ${max} operations at once`, { limit: 'graphqlWsSubscriptionsPerConnectionMax', value: max }),
          ),
        ]);
      }
      const prepared = await prepareOperation(deps, ctx.extra.credentials!, payload);
      return Array.isArray(prepared) ? refused(prepared as readonly GraphQLError[]) : (prepared as ExecutionArgs);
    },
    // graphql-ws's own graphql-js may be another copy than ours (a test runner can load both):
    // ours runs every operation, and refusals travel as arguments (see refused()).
    execute: (args) => (args.contextValue instanceof Refusal ? { errors: args.contextValue.errors } : runOperation(args)) as never,
    subscribe: (args) => (args.contextValue instanceof Refusal ? { errors: args.contextValue.errors } : runOperation(args)),
    onNext: (_ctx, _id, _payload, _args, result) => formatResult(result, deps.onInternalError),
    onError: (_ctx, _id, _payload, errors) => errors.map((e) => formatError(e, deps.onInternalError)),
  });
  return {
    open(socket, extra) {
      return server.opened(
        {
          protocol: socket.protocol,
          send: (data) => socket.send(data),
          close: (code, reason) => socket.close(code ?? 1000, reason ?? ''),
          onMessage: (callback) => {
            socket.raw.on('message', (data) => {
              callback(String(data)).catch((error: unknown) => {
                deps.onInternalError(error);
                socket.close(4500, 'internal error');
              });
            });
          },
        },
        extra,
      );
    },
  };
}

/** The errors that refuse an operation: sent as its one result (`next` with errors, then `complete`). */
class Refusal {
  constructor(readonly errors: readonly GraphQLError[]) {}
}

const REFUSED_SCHEMA = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { refused: { type: GraphQLString } } }) });
const REFUSED_DOCUMENT = parse('query refused { refused }');

/**
 * A refused operation as execution arguments. (graphql-ws recognises returned errors with
 * `instanceof` of its own graphql-js copy, which need not be ours.)
 */
function refused(errors: readonly GraphQLError[]): ExecutionArgs {
  return { schema: REFUSED_SCHEMA, document: REFUSED_DOCUMENT, contextValue: new Refusal(errors) };
}
