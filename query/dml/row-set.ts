import { invalid, Scope, type ExprEnv } from '../bind/index.js';
import type { SetClause } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';

type MultiSet = NonNullable<SetClause['multi']>;

/**
 * Column k of `SET (a, b, ...) = (SELECT ...)`: a scalar subquery over the query's k-th column.
 * Each column runs the query on its own (same rows for a query without volatile functions);
 * no row gives NULL to every column and more than one row is an error, as in PostgreSQL.
 */
export function bindRowSetValue(multi: MultiSet, env: ExprEnv): Expr {
  const { source, index, count } = multi;
  if (source.kind !== 'sublink' || source.mode !== 'scalar') throw invalid('source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression');
  const child = new Scope(env.scope);
  const { plan, types } = env.bindSubquery(source.query, child);
  if (types.length !== count) throw invalid('number of columns does not match number of values');
  const out = plan.columns[index]!;
  const exprs: Expr[] = [{ kind: 'column', type: out.type, index, name: out.name }];
  return {
    kind: 'subquery',
    type: out.type,
    id: env.ctx.subqueryId(),
    mode: 'scalar',
    plan: { kind: 'project', input: plan, exprs, columns: [out] },
    test: null,
    correlated: child.usedOuter,
  };
}
