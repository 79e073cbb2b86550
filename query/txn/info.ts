import type { ErrorCode } from '../../core/errors.js';
import type { Lsn } from '../../core/units.js';
import type { IsolationLevel, TxnStatus } from './txn-state.js';

/** Why a transaction was aborted: its failing statement's error. */
export interface TxnFailure {
  readonly code: ErrorCode;
  readonly message: string;
}

/** A transaction as begin() and get() report it (each protocol renders it: protocols/http/transactions/). */
export interface TransactionInfo {
  readonly transactionId: string;
  readonly isolation: IsolationLevel;
  readonly readOnly: boolean;
  readonly status: TxnStatus;
  readonly startedAtMs: number;
  readonly expiresAtMs: number;
  /** When it committed, rolled back or expired; null while it is open. */
  readonly endedAtMs: number | null;
  /** Set once a statement failed (the transaction is aborted, or ended after that). */
  readonly failure: TxnFailure | null;
}

/** What commit() reports. */
export interface TransactionCommitted {
  readonly transactionId: string;
  readonly status: TxnStatus;
  readonly committedAtMs: number;
  /** The LSN of its log record; null when it changed nothing (nothing was appended). */
  readonly lsn: Lsn | null;
}

/** What rollback() reports. */
export interface TransactionRolledBack {
  readonly transactionId: string;
  readonly status: TxnStatus;
  readonly rolledBackAtMs: number;
}
