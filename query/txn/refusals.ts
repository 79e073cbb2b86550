import { SvcError } from '../../core/errors.js';
import { LIMITS } from '../limits.js';
import type { Transaction } from './transaction.js';

/** Ended transactions are remembered this long (query/limits.ts), so a late call hears why it ended rather than "not found". */
const ENDED_RETENTION_MS = LIMITS.txnEndedRetentionMs;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Unknown, long forgotten, or not the caller's to see (answered alike: existence is not theirs to learn). */
export function transactionNotFound(id: string): SvcError {
  return new SvcError('NOT_FOUND', `transaction ${id} does not exist (or ended more than ${ENDED_RETENTION_MS / 60_000} minutes ago)`, { transaction_id: id });
}

/** A statement or commit is running: a transaction takes one at a time. */
export function transactionBusy(txn: Transaction): SvcError {
  return new SvcError('INVALID_STATE', `transaction ${txn.id} is running another statement (or committing); send its statements one at a time`, {
    transaction_id: txn.id,
    status: txn.status,
  });
}

/** A statement after one failed: PostgreSQL's "current transaction is aborted". */
export function transactionAborted(txn: Transaction): SvcError {
  return new SvcError(
    'INVALID_STATE',
    `transaction ${txn.id} is aborted (${txn.failure?.code ?? 'error'}: ${txn.failure?.message ?? ''}); commands are ignored until it is rolled back`,
    {
      transaction_id: txn.id,
      status: txn.status,
    },
  );
}

/** COMMIT of an aborted transaction: it was rolled back instead. */
export function abortedAtCommit(txn: Transaction): SvcError {
  const failure = txn.failure;
  return new SvcError(
    'INVALID_STATE',
    `transaction ${txn.id} was aborted by an error in an earlier statement and has been rolled back${failure ? ` (${failure.code}: ${failure.message})` : ''}`,
    {
      transaction_id: txn.id,
      status: txn.status,
    },
  );
}

/** Throws when the transaction has ended (expired, committed, rolled back): nothing more can run in it. */
export function refuseEnded(txn: Transaction): void {
  if (txn.status === 'expired') {
    throw new SvcError('INVALID_STATE', `transaction ${txn.id} expired at ${iso(txn.init.expiresAtMs)} and was rolled back; start a new one`, {
      transaction_id: txn.id,
      status: txn.status,
      expired_at: iso(txn.init.expiresAtMs),
    });
  }
  if (txn.status === 'committed' || txn.status === 'rolled_back') {
    throw new SvcError('INVALID_STATE', `transaction ${txn.id} has already ${txn.status === 'committed' ? 'committed' : 'been rolled back'}`, {
      transaction_id: txn.id,
      status: txn.status,
    });
  }
}
