import type { FastifyPluginAsync } from 'fastify';
import { ISOLATION_LEVELS, type IsolationLevel, type TxnManager } from '../../../query/index.js';
import { callerOf, engineScope, principalOf } from '../../auth/principal.js';
import { untilClientLeaves } from '../client-abort.js';
import { measured, type QueryMetrics } from '../../metrics/query-metrics.js';
import { maxRowsProperty, sqlBodySchema, type QueryRouteLimits } from '../query/sql-body-schema.js';

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
 * guarantees and when TRANSACTION_CONFLICT comes.
 */
export function transactionRoutes(options: { transactions: TxnManager; limits: TransactionRouteLimits; metrics?: QueryMetrics }): FastifyPluginAsync {
  const { transactions } = options;
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
      return reply.code(201).header('location', `${request.url.replace(/\/$/, '')}/${created.transaction_id as string}`).send(created);
    });
    app.get<IdRequest>('/transactions/:transaction_id', { schema: { params: idParams } }, async (request) =>
      transactions.get(request.params.transaction_id, callerOf(request)),
    );
    app.post<IdRequest & { Body: StatementBody }>('/transactions/:transaction_id/query', { schema: { params: idParams, body: statementSchema } }, async (request, reply) => {
      const started = performance.now();
      const { body } = request;
      const id = request.params.transaction_id;
      const { tenant, ...scope } = engineScope(request);
      const result = await measured(options.metrics, tenant, () =>
        untilClientLeaves(reply, (signal) =>
          transactions.query(id, callerOf(request), body.sql, { params: body.params ?? [], timeoutMs: body.timeout_ms, maxRows: body.max_rows, signal, ...scope }),
        ),
      );
      const response: Record<string, unknown> = {
        success: true,
        transaction_id: id,
        command: result.command,
        affected_rows: result.affectedRows ?? 0,
        row_count: result.rowCount,
        data: result.rows,
      };
      if (body.include_metadata) {
        response.metadata = { columns: result.columns, row_count: result.rowCount, execution_time_ms: Math.round(performance.now() - started), truncated: result.truncated };
      }
      return response;
    });
    app.post<IdRequest>('/transactions/:transaction_id/commit', { schema: { params: idParams } }, async (request) =>
      transactions.commit(request.params.transaction_id, callerOf(request)),
    );
    app.post<IdRequest>('/transactions/:transaction_id/rollback', { schema: { params: idParams } }, async (request) =>
      transactions.rollback(request.params.transaction_id, callerOf(request)),
    );
  };
}
