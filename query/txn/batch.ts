import { SvcError } from '../../core/errors.js';
import type { ParsedStatement } from '../parse/index.js';

const DATA_STATEMENTS = new Set(['query', 'insert', 'update', 'delete']);

function controlOf(statement: ParsedStatement): string | null {
  return statement.body.kind === 'transaction' ? statement.body.command : null;
}

/**
 * How a request of several statements runs. PostgreSQL runs the statements of one simple-query
 * message as one transaction, with BEGIN ... COMMIT | ROLLBACK around them or not; so does svcdb
 * when they only read and write rows (and at least one writes). Returns the statements to run
 * atomically and how the batch ends, or null to run them one by one (one statement; or DDL in the
 * batch: catalog changes are not transactional here, so BEGIN and COMMIT then do nothing).
 */
export function atomicBatch(statements: readonly ParsedStatement[]): { body: ParsedStatement[]; end: 'commit' | 'rollback' } | null {
  const body = statements.filter((s) => controlOf(s) === null);
  const data = body.every((s) => s.explain !== null || DATA_STATEMENTS.has(s.body.kind));
  const writes = body.some((s) => s.explain === null && s.body.kind !== 'query');
  const controls = statements.map(controlOf);
  if (!data && controls.includes('ROLLBACK')) {
    // Run one by one, a ROLLBACK could not undo what came before it: refuse rather than pretend.
    throw new SvcError(
      'INVALID_QUERY',
      'ROLLBACK cannot undo DDL in the same request (catalog changes are not transactional here); send the DDL alone, or the data statements without DDL',
      {
        reason: 'transaction_control',
      },
    );
  }
  if (!data || !writes || statements.length < 2) return null;
  const opens = controls[0] === 'BEGIN';
  const last = controls.at(-1);
  const closes = last === 'COMMIT' || last === 'ROLLBACK';
  const inner = controls.slice(1, -1).some((c) => c !== null);
  if (inner || opens !== closes) {
    throw new SvcError(
      'INVALID_QUERY',
      'in one request, BEGIN may only come first and COMMIT or ROLLBACK only last; for a transaction over several requests, begin one explicitly and send its statements to it',
      {
        reason: 'transaction_control',
      },
    );
  }
  return { body, end: last === 'ROLLBACK' ? 'rollback' : 'commit' };
}
