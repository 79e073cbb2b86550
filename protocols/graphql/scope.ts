import type { SqlEngine } from '../../query/index.js';
import type { Principal } from '../auth/principal.js';
import type { RequestScope } from './context.js';
import type { GraphqlLimits } from './limits.js';
import { RequestTransaction, type MutationTransactions } from './mutations/index.js';

export interface ScopeDeps {
  readonly engine: SqlEngine;
  readonly limits: GraphqlLimits;
  /** query's TxnManager: without it, a scope has no transaction and mutations are refused. */
  readonly transactions?: MutationTransactions;
}

export interface ScopeOptions {
  readonly signal: AbortSignal;
  /** When every statement of the scope must have finished (epoch ms). */
  readonly deadlineMs: number;
  readonly logInternal: (error: unknown) => void;
}

/** The scope of one GraphQL operation of `principal` (over HTTP or a WebSocket): its SQL runner, loads and transaction. */
export function principalScope(deps: ScopeDeps, principal: Principal, options: ScopeOptions): RequestScope {
  // A read_only principal's statements run read-only in the engine too (as engineScope does for REST).
  const engineOptions = principal.role === 'read_only' ? { tenant: principal.tenant, readOnly: 'role' as const } : { tenant: principal.tenant };
  const statementOptions = () => ({
    timeoutMs: Math.max(1, options.deadlineMs - Date.now()),
    maxRows: deps.limits.resultRowsMax,
    signal: options.signal,
    ...engineOptions,
  });
  const transaction = deps.transactions ? new RequestTransaction(deps.transactions, principal.tenant, statementOptions) : undefined;
  const scope: RequestScope = {
    tenant: principal.tenant,
    role: principal.role,
    batches: new Map(),
    truncated: false,
    logInternal: options.logInternal,
    transaction,
    async run(sql, params) {
      // Once a mutation wrote, the request's reads (returning's relations) see its writes.
      const result = transaction?.begun ? await transaction.run(sql, params) : await deps.engine.execute(sql, { params, ...statementOptions() });
      if (result.truncated) scope.truncated = true;
      return result;
    },
  };
  return scope;
}
