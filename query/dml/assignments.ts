import type { TableDef } from '../../core/catalog.js';
import { SvcError, columnNotFound } from '../../core/errors.js';
import { bindExpr, coerce, invalid, type ExprEnv } from '../bind/index.js';
import type { SetClause } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import type { DmlRun } from './common.js';
import { bindArrayAssign } from './array-assign.js';
import { defaultExprOf } from './row-source.js';
import { bindRowSetValue } from './row-set.js';

/** One `SET column = value` bound: the column's position in the table and the value coerced to its type. */
export interface Assignment {
  position: number;
  expr: Expr;
}

/**
 * The SET list of an UPDATE or of INSERT ... ON CONFLICT DO UPDATE, bound over `env`: each column
 * named once, a subscripted one (`a[i] = v`) through bindArrayAssign over `alias`, a row-set one
 * (`(a, b) = (SELECT ...)`) through its shared source. `SET c = DEFAULT` takes the column's
 * default, unless `defaultRefusedIn` names the clause that does not support it (ON CONFLICT).
 */
export function bindAssignments(
  run: DmlRun,
  table: TableDef,
  env: ExprEnv,
  alias: string,
  set: readonly SetClause[],
  defaultRefusedIn: string | null,
): Assignment[] {
  const assigned = new Set<number>();
  return set.map((s) => {
    const name = s.column;
    const position = table.columns.findIndex((c) => c.name === name);
    if (position < 0) throw columnNotFound(name, { relation: table.name });
    if (assigned.has(position)) throw new SvcError('INVALID_QUERY', `multiple assignments to same column "${name}"`, { column: name });
    assigned.add(position);
    if (defaultRefusedIn !== null && s.value.kind === 'default')
      throw invalid(`DEFAULT in ${defaultRefusedIn} SET is not supported`, { reason: 'unsupported' });
    const column = table.columns[position]!;
    const value =
      s.subscript !== undefined
        ? bindArrayAssign(env, column, alias, s.subscript, s.value, s.loc)
        : s.value.kind === 'default'
          ? defaultExprOf(run, table, position)
          : s.multi
            ? bindRowSetValue(s.multi, env)
            : bindExpr(s.value, env);
    return { position, expr: coerce(run.ctx, value, column.type, 'assignment') };
  });
}
