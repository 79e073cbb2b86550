import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLError } from 'graphql';
import { getOperationAST, parse } from './graphql-lib.js';
import { SvcError } from '../../core/errors.js';
import type { SqlEngine } from '../../query/index.js';
import { authenticate, type AuthGate } from '../auth/authenticate.js';
import { principalOf } from '../auth/principal.js';
import { MALFORMED_REQUEST_CODE, httpStatusOf, toSvcError } from '../errors.js';
import { untilClientLeaves } from '../http/client-abort.js';
import { measured, type QueryMetrics } from '../metrics/query-metrics.js';
import type { RequestScope } from './context.js';
import { formatError, formatRequestErrors, type FormattedError } from './errors.js';
import { GRAPHIQL_HTML } from './graphiql.js';
import { getOperationOf, GRAPHQL_RESPONSE_JSON, operationOf, responseTypeOf, type GraphqlOperation } from './http-shape.js';
import { settleMutations, type MutationTransactions } from './mutations/index.js';
import { principalScope } from './scope.js';
import { REQUEST_TIMEOUT_MS_DEFAULT, type GraphqlLimits } from './limits.js';
import type { TenantSchemas } from './schema-cache.js';

export interface GraphqlRouteDeps {
  readonly engine: SqlEngine;
  readonly schemas: TenantSchemas;
  readonly limits: GraphqlLimits;
  readonly gate: AuthGate;
  readonly metrics?: QueryMetrics;
  /** query's TxnManager: a request's mutations run in one transaction (without it, mutations are refused). */
  readonly transactions?: MutationTransactions;
}

/** One operation's answer and whether it failed before execution (a "request error": 400 with graphql-response+json). */
interface Outcome {
  readonly body: { data?: unknown; errors?: FormattedError[]; extensions?: Record<string, unknown> };
  readonly requestError: boolean;
  /** A status whatever the media type: 400 for a malformed request, 405 for a mutation over GET. */
  readonly status?: number;
}

const requestError = (errors: FormattedError[]): Outcome => ({ body: { errors }, requestError: true });

function scopeFor(deps: GraphqlRouteDeps, request: FastifyRequest, signal: AbortSignal, deadlineMs: number): RequestScope {
  return principalScope(deps, principalOf(request), {
    signal,
    deadlineMs,
    logInternal: (error) => request.log.error({ err: error }, 'graphql resolver failed'),
  });
}

/** The kind of the operation to run (null when it does not parse: execution reports that). */
function operationKind(operation: GraphqlOperation): string | null {
  try {
    return getOperationAST(parse(operation.query), operation.operationName ?? undefined)?.operation ?? null;
  } catch {
    return null;
  }
}

/**
 * What refuses an operation before it runs: a subscription (served over WebSocket only), a
 * mutation over GET (GraphQL over HTTP: 405, Allow: POST), or from a read_only credential (403
 * AUTHORIZATION_DENIED, whether or not the schema has it).
 */
function refusal(request: FastifyRequest, reply: FastifyReply, operation: GraphqlOperation, method: 'GET' | 'POST'): Outcome | null {
  const kind = operationKind(operation);
  if (kind === 'subscription') {
    return requestError([
      {
        message: 'subscriptions are served over a WebSocket at /graphql (graphql-transport-ws or graphql-ws)',
        extensions: { code: 'INVALID_QUERY', details: { reason: 'subscription_over_http' } },
      },
    ]);
  }
  const readOnly = principalOf(request).role === 'read_only';
  if ((method !== 'GET' && !readOnly) || kind !== 'mutation') return null;
  if (method === 'GET') {
    reply.header('allow', 'POST');
    return { ...requestError([{ message: 'a mutation must be sent with POST', extensions: { code: MALFORMED_REQUEST_CODE } }]), status: 405 };
  }
  return {
    ...requestError([{ message: 'the read_only role may not run mutations', extensions: { code: 'AUTHORIZATION_DENIED', details: { role: 'read_only' } } }]),
    status: 403,
  };
}

async function execute(deps: GraphqlRouteDeps, request: FastifyRequest, operation: GraphqlOperation, signal: AbortSignal): Promise<Outcome> {
  const schema = await deps.schemas.get(principalOf(request).tenant);
  const scope = scopeFor(deps, request, signal, Date.now() + Math.min(REQUEST_TIMEOUT_MS_DEFAULT, deps.limits.queryTimeoutMsMax));
  try {
    const executed = await schema.app.graphql(operation.query, { svc: scope } as never, operation.variables ?? undefined, operation.operationName ?? undefined);
    const result = await settleMutations(scope, executed);
    const body: Outcome['body'] = { ...(result.errors?.length ? { errors: result.errors as unknown as FormattedError[] } : {}), data: result.data ?? null };
    if (scope.truncated) body.extensions = { truncated: true, max_result_rows: deps.limits.resultRowsMax };
    // graphql-jit reports bad variables in the result: no data and no error at a path is a request error.
    const requested = executed.data == null && (executed.errors ?? []).every((e) => !(e as { path?: unknown }).path);
    return { body, requestError: requested };
  } catch (error) {
    await scope.transaction?.abandon();
    const errors = (error as { errors?: (GraphQLError | Error)[] }).errors;
    if (Array.isArray(errors) && errors.length) return requestError(formatRequestErrors(errors, deps.limits.graphqlDepthMax));
    throw error;
  }
}

/** Maps `items` through `run` one at a time, in order. */
async function inOrder<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (const item of items) results.push(await run(item));
  return results;
}

/** Runs one operation or a batch (an array) and sends the GraphQL-over-HTTP answer. */
async function answer(deps: GraphqlRouteDeps, request: FastifyRequest, reply: FastifyReply, raw: unknown, method: 'GET' | 'POST'): Promise<FastifyReply> {
  const type = responseTypeOf(request.headers.accept);
  if (type === null) {
    const error = {
      message: 'Accept must allow application/graphql-response+json or application/json',
      extensions: { code: MALFORMED_REQUEST_CODE, details: { reason: 'not_acceptable' } },
    };
    return reply
      .code(406)
      .type('application/json; charset=utf-8')
      .send({ errors: [error] });
  }
  const batch = Array.isArray(raw);
  const items = batch ? (raw as unknown[]) : [raw];
  if (batch && (items.length === 0 || items.length > deps.limits.graphqlBatchOperationsMax)) {
    throw new SvcError('LIMIT_EXCEEDED', `a batch holds 1 to ${deps.limits.graphqlBatchOperationsMax} operations (SVC_GRAPHQL_BATCH_OPERATIONS_MAX)`, {
      limit: deps.limits.graphqlBatchOperationsMax,
    });
  }
  const outcomes = await measured(deps.metrics, principalOf(request).tenant, () =>
    untilClientLeaves(reply, (signal) =>
      // In order, one after another, each committing on its own (as Apollo and Hasura batches):
      // a later operation sees what an earlier one wrote.
      inOrder(items, async (item) => {
        const operation = method === 'GET' ? getOperationOf(item as Record<string, unknown>) : operationOf(item);
        if (typeof operation === 'string') return { ...requestError([{ message: operation, extensions: { code: MALFORMED_REQUEST_CODE } }]), status: 400 };
        return refusal(request, reply, operation, method) ?? execute(deps, request, operation, signal);
      }),
    ),
  );
  const only = outcomes[0]!;
  // application/json: 200 once the request is well-formed (legacy clients read the body);
  // graphql-response+json: 400 when nothing was executed. A batch answers 200 with each result.
  const status = batch ? 200 : (only.status ?? (only.requestError && type === GRAPHQL_RESPONSE_JSON ? 400 : 200));
  return reply
    .code(status)
    .type(`${type}; charset=utf-8`)
    .send(batch ? outcomes.map((o) => o.body) : only.body);
}

/** The GraphQL shape of a failure outside execution (auth, rate limit, body): status from the one table. */
function sendGraphqlError(error: unknown, request: FastifyRequest, reply: FastifyReply, bodyLimitBytes: number): FastifyReply {
  const svc = toSvcError(error, { bodyLimitBytes });
  const status = httpStatusOf(svc.code);
  if (status >= 500) request.log.error({ err: error, code: svc.code }, 'graphql request failed');
  else request.log.info({ code: svc.code, statusCode: status, reason: svc.message }, 'graphql request rejected');
  const type = responseTypeOf(request.headers.accept) ?? 'application/json';
  return reply
    .code(status)
    .type(`${type}; charset=utf-8`)
    .send({ errors: [formatError(svc)] });
}

/**
 * POST and GET /graphql (and GraphiQL at /graphiql), at the listener's root. Credentials as on
 * /api/v1 (the same auth gate, X-Tenant-ID included); each tenant is served by its own schema.
 */
export function graphqlRoutes(deps: GraphqlRouteDeps & { readonly bodyLimitBytes: number }): FastifyPluginAsync {
  const hook = authenticate(deps.gate);
  return async (app) => {
    app.setErrorHandler((error, request, reply) => sendGraphqlError(error, request, reply, deps.bodyLimitBytes));
    // GraphQL over HTTP also allows the document itself as the body.
    app.addContentTypeParser('application/graphql', { parseAs: 'string' }, (_request, body, done) => done(null, { query: body }));
    app.post('/graphql', { onRequest: hook }, (request, reply) => answer(deps, request, reply, request.body, 'POST'));
    // A WebSocket upgrade on GET /graphql authenticates in connection_init (browsers cannot set headers): ws/auth.ts.
    const getHook = async function (this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (!(request as { ws?: boolean }).ws) await hook.call(this as never, request, reply);
    };
    app.get('/graphql', { onRequest: getHook }, (request, reply) => answer(deps, request, reply, request.query, 'GET'));
    if (deps.limits.graphqlGraphiql) app.get('/graphiql', (_request, reply) => reply.type('text/html; charset=utf-8').send(GRAPHIQL_HTML));
  };
}
