import type { QueryResult } from '../../query/index.js';
import type { RequestTransaction } from './mutations/transaction.js';

/**
 * What every resolver of one GraphQL request shares: the SQL runner bound to the request's
 * principal (tenant, role, deadline, row cap) and the request's batches of relation loads.
 */
export interface RequestScope {
  /** Runs ONE parameterized statement as the request's principal (SqlEngine.execute). */
  run(sql: string, params: readonly unknown[]): Promise<QueryResult>;
  /** Pending relation loads of this request, keyed by relation + arguments + columns (loaders.ts). */
  readonly batches: Map<string, unknown>;
  /** Set when a statement's rows were cut at the row cap. */
  truncated: boolean;
  /** The principal's role: mutations check it (read_only may not write). */
  readonly role: 'admin' | 'read_write' | 'read_only';
  readonly tenant: string;
  /** Logs an error a resolver threw that is not an SvcError (sent as INTERNAL_ERROR, message hidden). */
  logInternal(error: unknown): void;
  /** The request's transaction: mutations write in it; once begun, `run` reads in it too (mutations/transaction.ts). */
  readonly transaction?: RequestTransaction;
}

/** The context object handed to mercurius's app.graphql(): ours under `svc` (mercurius adds its own keys). */
export interface GraphqlContext {
  readonly svc: RequestScope;
  /** A new scope (own deadline and loads) for each evaluation of a live query, aborted by `signal`; without it, `svc`. */
  readonly renew?: (signal: AbortSignal) => RequestScope;
}

/** The request scope of a resolver's context. */
export const scopeOf = (context: unknown): RequestScope => (context as GraphqlContext).svc;
