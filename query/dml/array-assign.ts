/**
 * `UPDATE … SET a[i] = v` (and ON CONFLICT DO UPDATE SET a[i] = v): the column's array with one
 * element replaced or appended, as PostgreSQL's array_set does for a one-dimensional array whose
 * lower bound is 1 (the only arrays svcdb stores). Positions past the end are filled with NULLs.
 */
import { SvcError } from '../../core/errors.js';
import type { ColumnDef } from '../../core/catalog.js';
import { bindExpr, coerce, type ExprEnv } from '../bind/index.js';
import type { SqlExpr } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import type { QType, QValue, ResolvedFunction } from '../types/contract.js';
import { elementType, T } from '../types/index.js';

/** The new value of `column` for `SET column[subscript] = value`, bound in `env` (the target's alias is `alias`). */
export function bindArrayAssign(env: ExprEnv, column: ColumnDef, alias: string, subscript: SqlExpr, value: SqlExpr, loc: number): Expr {
  const type = column.type as QType;
  if (type.name !== 'array') {
    throw new SvcError('INVALID_QUERY', `cannot subscript type ${env.ctx.types.typeText(type).toLowerCase()} because it does not support subscripting`, {
      column: column.name,
      sqlstate: '42804',
    });
  }
  const element = elementType(type);
  const current = bindExpr({ kind: 'column_ref', qualifier: [alias], column: column.name, loc }, env);
  const index = coerce(env.ctx, bindExpr(subscript, env), T.int4, 'implicit');
  const item = coerce(env.ctx, bindExpr(value, env), element, 'assignment');
  const fn: ResolvedFunction = {
    name: 'array_set',
    argTypes: [type, T.int4, element],
    returnType: type,
    strict: false,
    immutable: true,
    impl: ([a, i, v]) => assign(a ?? null, i ?? null, v ?? null, element),
  };
  return { kind: 'call', type, fn, args: [current, index, item], label: `${column.name}[]` };
}

function unsupported(message: string): SvcError {
  return new SvcError('INVALID_QUERY', message, { reason: 'unsupported' });
}

function assign(array: QValue, index: QValue, value: QValue, element: QType): QValue {
  if (index === null) throw new SvcError('INVALID_QUERY', 'array subscript in assignment must not be null', { sqlstate: '22004' });
  const i = index as number;
  const items = (array ?? []) as readonly QValue[];
  if (element.name !== 'jsonb' && items.some((e) => Array.isArray(e))) {
    throw unsupported('assigning one element of a multi-dimensional array is not supported; assign the whole array');
  }
  // PostgreSQL would give the array a lower bound other than 1 ('[0:1]={…}'), which svcdb does not keep.
  if (i < 1 || (items.length === 0 && i !== 1))
    throw unsupported(`assigning subscript ${i} here would make an array whose lower bound is not 1, which svcdb does not keep`);
  const out = items.slice();
  while (out.length < i - 1) out.push(null);
  out[i - 1] = value;
  return out;
}
