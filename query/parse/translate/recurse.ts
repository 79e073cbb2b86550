/**
 * The grammar is recursive (expressions hold subqueries, queries hold expressions, CTEs hold DML)
 * but modules must not import each other in a cycle (test/architecture.test.ts): the translators
 * reach each other through these late-bound entry points, which translate/index.ts wires once.
 */
import type { Node } from '@pgsql/types';
import type { DmlStatement, QueryExpr, SqlExpr } from '../ast/index.js';

const unwired = (): never => {
  throw new Error('query/parse/translate is used without its index.ts (the translators are not wired)');
};

/** The real translators, set by translate/index.ts. */
export const late: { expr: (node: Node) => SqlExpr; query: (node: Node) => QueryExpr; dml: (node: Node) => DmlStatement } = {
  expr: unwired,
  query: unwired,
  dml: unwired,
};

/** svcdb's SqlExpr for one raw expression node; unknown kinds throw INVALID_QUERY 'unsupported'. */
export function translateExpr(node: Node): SqlExpr {
  return late.expr(node);
}

/** translateExpr over a list (absent = []). */
export function exprList(list: readonly Node[] | undefined): SqlExpr[] {
  return (list ?? []).map(late.expr);
}

/** translateExpr of an optional node (absent = null). */
export function optExpr(node: Node | undefined): SqlExpr | null {
  return node === undefined || node === null ? null : late.expr(node);
}

/** A raw query node (`{ SelectStmt }`) -> QueryExpr. */
export function translateQuery(node: Node): QueryExpr {
  return late.query(node);
}

/** A raw INSERT/UPDATE/DELETE node -> DmlStatement. */
export function translateDml(node: Node): DmlStatement {
  return late.dml(node);
}
