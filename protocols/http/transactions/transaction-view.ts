import type { QueryResult, TransactionCommitted, TransactionInfo, TransactionRolledBack } from '../../../query/index.js';
import type { ResultMetadataView } from '../query/result-view.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** A transaction as POST /transactions (201) and GET /transactions/{id} show it. */
export function transactionView(info: TransactionInfo): Record<string, unknown> {
  return {
    transaction_id: info.transactionId,
    isolation_level: info.isolation,
    read_only: info.readOnly,
    status: info.status,
    started_at: iso(info.startedAtMs),
    expires_at: iso(info.expiresAtMs),
    ...(info.endedAtMs !== null ? { ended_at: iso(info.endedAtMs) } : {}),
    ...(info.failure ? { error: { code: info.failure.code, message: info.failure.message } } : {}),
  };
}

/** POST /transactions/{id}/commit's answer; `lsn` only when something was appended. */
export function committedView(committed: TransactionCommitted): Record<string, unknown> {
  return {
    success: true,
    transaction_id: committed.transactionId,
    status: committed.status,
    committed_at: iso(committed.committedAtMs),
    ...(committed.lsn !== null ? { lsn: committed.lsn } : {}),
  };
}

/** POST /transactions/{id}/rollback's answer. */
export function rolledBackView(rolledBack: TransactionRolledBack): Record<string, unknown> {
  return { success: true, transaction_id: rolledBack.transactionId, status: rolledBack.status, rolled_back_at: iso(rolledBack.rolledBackAtMs) };
}

/**
 * POST /transactions/{id}/query's answer: the spec's success, transaction_id and affected_rows
 * (0 for a SELECT), with the rows, and the metadata POST /query gives when asked for it.
 */
export function statementView(transactionId: string, result: QueryResult, metadata: ResultMetadataView | null): Record<string, unknown> {
  return {
    success: true,
    transaction_id: transactionId,
    command: result.command,
    affected_rows: result.affectedRows ?? 0,
    row_count: result.rowCount,
    data: result.rows,
    ...(metadata ? { metadata } : {}),
  };
}
