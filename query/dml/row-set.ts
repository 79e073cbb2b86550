import { functionName, invalid, Scope, type ExprEnv } from '../bind/index.js';
import { ROWSET_FN, type AstNode } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';

/** Whether an UPDATE SET value is one column of `SET (a, b) = (SELECT ...)` (see parse/preprocess.ts). */
export function isRowSetValue(node: AstNode): boolean {
  return node?.type === 'function' && functionName(node).name === ROWSET_FN;
}

/**
 * Column k of `SET (a, b, ...) = (SELECT ...)`: a scalar subquery over the query's k-th column.
 * Each column runs the query on its own (same rows for a query without volatile functions);
 * no row gives NULL to every column and more than one row is an error, as in PostgreSQL.
 */
export function bindRowSetValue(node: AstNode, env: ExprEnv): Expr {
  const [k, n, query] = node.args.value as AstNode[];
  const child = new Scope(env.scope);
  const { plan, types } = env.bindSubquery(query!.ast, child);
  if (types.length !== Number(n!.value)) throw invalid('number of columns does not match number of values');
  const column = Number(k!.value);
  const out = plan.columns[column]!;
  const exprs: Expr[] = [{ kind: 'column', type: out.type, index: column, name: out.name }];
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
