import { SvcError } from '../../core/errors.js';
import type { TxnOp } from '../../core/log-records.js';
import { LIMITS } from '../limits.js';

type NameKind = 'schema' | 'table' | 'column' | 'index' | 'constraint';

/**
 * A name a catalog change would store. NUL is refused (PostgreSQL accepts no NUL in query text
 * at all); names are bounded (PostgreSQL truncates at 63 bytes, which makes two long names
 * collide silently: refusing says so). The name itself is not echoed: it may be huge.
 */
function checkName(name: string, kind: NameKind): void {
  if (name.includes('\u0000')) {
    throw new SvcError('INVALID_QUERY', `${kind} name must not contain a NUL character`, { reason: 'invalid_name', name_kind: kind });
  }
  const max = kind === 'index' || kind === 'constraint' ? LIMITS.derivedNameCharsMax : LIMITS.nameCharsMax;
  if (name.length > max) {
    throw new SvcError('INVALID_QUERY', `${kind} name is longer than ${max} characters`, { reason: 'name_too_long', name_kind: kind, limit: max });
  }
}

/** Checks every name the tables of these log ops would carry (a put_table carries all of a table's). */
export function checkCatalogNames(ops: readonly TxnOp[]): void {
  for (const op of ops) {
    if (op.kind !== 'put_table') continue;
    const table = op.table;
    checkName(table.schema, 'schema');
    checkName(table.name, 'table');
    for (const column of table.columns) checkName(column.name, 'column');
    for (const index of table.indexes) checkName(index.name, 'index');
    for (const constraint of table.constraints) checkName(constraint.name, 'constraint');
  }
}
