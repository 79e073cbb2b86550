import type { FastifyPluginAsync } from 'fastify';
import { newUlid } from '../../../core/ids.js';
import { ISOLATION_LEVELS, type IsolationLevel, type SqlEngine, type TxnManager } from '../../../query/index.js';
import { callerOf, engineScope, principalOf } from '../../auth/principal.js';
import { untilClientLeaves } from '../client-abort.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { resultMetadataView } from '../query/result-view.js';
import { maxRowsProperty, sqlBodySchema, type QueryRouteLimits } from '../query/sql-body-schema.js';
import { committedView, rolledBackView, statementView, transactionView } from './transaction-view.js';

export interface TransactionRouteLimits extends QueryRouteLimits {
  readonly transactionTimeoutMsMax: number;
}

interface BeginBody {
  isolation_level: IsolationLevel;
  timeout_ms?: number;
  read_only: boolean;
}

interface StatementBody {
  sql: string;
  params?: unknown[];
  timeout_ms: number;
  max_rows: number;
  include_metadata: boolean;
}

const idParams = {
  type: 'object',
  required: ['transaction_id'],
  additionalProperties: false,
  properties: { transaction_id: { type: 'string', minLength: 1, maxLength: 64 } },
} as const;

function beginSchema(limits: TransactionRouteLimits) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      isolation_level: { type: 'string', enum: [...ISOLATION_LEVELS], default: 'read_committed' },
      timeout_ms: { type: 'integer', minimum: 1, maximum: limits.transactionTimeoutMsMax },
      read_only: { type: 'boolean', default: false },
    },
  } as const;
}

type IdRequest = { Params: { transaction_id: string } };

/**
 * POST /transactions, GET /transactions/{id}, POST /transactions/{id}/query, /commit, /rollback
 * (under /api/v1). Transactions are optimistic (query/txn): docs/api.md says what each level
 * guarantees and when TRANSACTION_CONFLICT comes. Statements run on the engine, in the transaction.
 */
export function transactionRoutes(options: {
  transactions: TxnManager;
  engine: SqlEngine;
  limits: TransactionRouteLimits;
  metrics?: QueryMetrics;
}): FastifyPluginAsync {
  const { transactions, engine } = options;
  const statementSchema = sqlBodySchema(options.limits, {
    max_rows: maxRowsProperty(options.limits),
    include_metadata: { type: 'boolean', default: false },
  });
  return async (app) => {
    // A body is optional: POST /transactions with none begins a read_committed transaction.
    const noBodyIsEmpty = async (request: { body: unknown }): Promise<void> => {
      request.body ??= {};
    };
    app.post<{ Body: BeginBody }>('/transactions', { schema: { body: beginSchema(options.limits) }, preValidation: noBodyIsEmpty }, async (request, reply) => {
      const body = request.body;
      const created = await transactions.begin({
        tenant: principalOf(request).tenant,
        owner: principalOf(request).credential,
        isolation: body.isolation_level,
        readOnly: body.read_only,
        ...(body.timeout_ms !== undefined ? { timeoutMs: body.timeout_ms } : {}),
      });
      return reply
        .code(201)
        .header('location', `${request.url.replace(/\/$/, '')}/${created.transactionId}`)
        .send(transactionView(created));
    });
    app.get<IdRequest>('/transactions/:transaction_id', { schema: { params: idParams } }, async (request) =>
      transactionView(transactions.get(request.params.transaction_id, callerOf(request))),
    );
    app.post<IdRequest & { Body: StatementBody }>(
      '/transactions/:transaction_id/query',
      { schema: { params: idParams, body: statementSchema } },
      async (request, reply) => {
        const started = performance.now();
        const { body } = request;
        const id = request.params.transaction_id;
        const scope = engineScope(request);
        const { credential, admin } = callerOf(request);
        const result = await measured(options.metrics, scope.tenant, () =>
          untilClientLeaves(reply, (signal) =>
            engine.execute(body.sql, {
              params: body.params ?? [],
              timeoutMs: body.timeout_ms,
              maxRows: body.max_rows,
              signal,
              ...scope,
              transaction: { id, credential, admin },
            }),
          ),
        );
        const metadata = body.include_metadata ? resultMetadataView(result, { elapsedMs: performance.now() - started, queryId: newUlid() }) : null;
        return statementView(id, result, metadata);
      },
    );
    app.post<IdRequest>('/transactions/:transaction_id/commit', { schema: { params: idParams } }, async (request) =>
      committedView(await transactions.commit(request.params.transaction_id, callerOf(request))),
    );
    app.post<IdRequest>('/transactions/:transaction_id/rollback', { schema: { params: idParams } }, async (request) =>
      rolledBackView(await transactions.rollback(request.params.transaction_id, callerOf(request))),
    );
  };
}
