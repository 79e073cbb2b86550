/** The isolation levels of POST /transactions, as PostgreSQL names them. */
export const ISOLATION_LEVELS = ['read_committed', 'repeatable_read', 'serializable'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];

/**
 * open: statements run. aborted: a statement failed; only rollback (or commit, which rolls back)
 * is accepted, as in PostgreSQL's "current transaction is aborted". committing: the commit record
 * is being validated and appended. The last three are final.
 */
export type TxnStatus = 'open' | 'aborted' | 'committing' | 'committed' | 'rolled_back' | 'expired';

export type TxnEvent = 'statement_failed' | 'commit' | 'committed' | 'commit_failed' | 'rollback' | 'expire';

const TRANSITIONS: Readonly<Record<TxnStatus, Partial<Record<TxnEvent, TxnStatus>>>> = {
  open: { statement_failed: 'aborted', commit: 'committing', rollback: 'rolled_back', expire: 'expired' },
  // Committing an aborted transaction ends it as rolled back (PostgreSQL answers COMMIT with ROLLBACK).
  aborted: { commit: 'rolled_back', rollback: 'rolled_back', expire: 'expired' },
  committing: { committed: 'committed', commit_failed: 'rolled_back' },
  committed: {},
  rolled_back: {},
  expired: {},
};

/** The status after `event`, or null when the event is not allowed in `status`. */
export function nextTxnStatus(status: TxnStatus, event: TxnEvent): TxnStatus | null {
  return TRANSITIONS[status][event] ?? null;
}

export function isFinal(status: TxnStatus): boolean {
  return status === 'committed' || status === 'rolled_back' || status === 'expired';
}
