/** Which statements may run where: read-only callers, open transactions, control statements outside one. */
import { SvcError } from '../core/errors.js';
import type { ReadOnlyReason } from './engine-options.js';
import type { CdcStatement, ParsedStatement, StatementBody } from './parse/index.js';
import { emptyResult, type QueryResult } from './result.js';

/** Reads (SELECT, EXPLAIN of one, transaction control) pass; anything else is refused with the reason's code. */
export function refuseWrite(statement: ParsedStatement, reason: ReadOnlyReason): void {
  const kind = statement.body.kind;
  // EXPLAIN takes only a SELECT (explain/), so an EXPLAIN passes with the SELECT it wraps.
  if (kind === 'query' || kind === 'transaction' || kind === 'cdc_show' || kind === 'cdc_status') return;
  const what = kind.startsWith('cdc_') ? 'this statement' : statementName(statement.body);
  if (reason === 'role') {
    throw new SvcError('AUTHORIZATION_DENIED', `the read_only role may not run ${what}; use a read_write or admin credential`, { role: 'read_only' });
  }
  throw new SvcError('INVALID_STATE', `cannot execute ${what} in a read-only transaction`, { read_only: true });
}

/** Statements an open transaction cannot hold: its own control (commit and rollback do that) and DDL (not transactional here). */
export function refuseInTransaction(statement: ParsedStatement): void {
  const kind = statement.body.kind;
  if (kind === 'transaction') {
    throw new SvcError('INVALID_QUERY', 'BEGIN, COMMIT and ROLLBACK are not statements of an open transaction: commit or roll it back instead', {
      reason: 'transaction_control',
    });
  }
  if (statement.explain || kind === 'query' || kind === 'insert' || kind === 'update' || kind === 'delete' || kind === 'cdc_show' || kind === 'cdc_status')
    return;
  throw ddlInTransaction();
}

export function ddlInTransaction(): SvcError {
  return new SvcError(
    'INVALID_QUERY',
    'DDL cannot run inside a transaction (catalog changes are not transactional here); run it on its own, outside the transaction',
    { reason: 'ddl_in_transaction' },
  );
}

export function isCdcStatement(body: StatementBody): body is CdcStatement {
  return body.kind.startsWith('cdc_');
}

/** BEGIN/COMMIT/ROLLBACK outside a transaction of the API: accepted and empty, as before (SAVEPOINT and RELEASE have nothing to act on). */
export function transactionControl(command: string): QueryResult {
  if (command === 'SAVEPOINT' || command === 'RELEASE' || command === 'ROLLBACK TO') {
    throw new SvcError('INVALID_QUERY', `${command} is not supported`, { statement: command, reason: 'unsupported' });
  }
  return emptyResult(command);
}

/** The statement's SQL name for messages: "INSERT", "CREATE TABLE", ... */
export function statementName(body: StatementBody): string {
  if (body.kind === 'unsupported') return body.name;
  if (body.kind === 'query') return 'SELECT';
  return body.kind.replaceAll('_', ' ').toUpperCase();
}
