import type { CommonTableExpr, QueryExpr, WithClause } from '../parse/index.js';
import { invalid } from './context.js';
import { bindRecursiveCte, refersTo } from './recursive-cte.js';
import type { Scope } from './scope.js';
import type { SelectBinder } from './bound.js';

/**
 * WITH a AS (...), b AS (...): each CTE bound in order (a later one may read an earlier one) and
 * registered in `scope`. A name may repeat an enclosing query's CTE (the inner one wins, as in
 * PostgreSQL), not another of the same WITH. AS [NOT] MATERIALIZED is accepted: a CTE's plan is
 * inlined where it is read either way, which gives the same rows.
 */
export function bindCtes(binder: SelectBinder, clause: WithClause, scope: Scope): void {
  const seen = new Set<string>();
  for (const { name } of clause.ctes) {
    if (seen.has(name)) throw invalid(`WITH query name "${name}" specified more than once`, { name });
    seen.add(name);
  }
  for (const cte of clause.recursive ? dependencyOrder(clause.ctes) : clause.ctes) {
    const name = cte.name;
    if (!isQuery(cte.query)) {
      throw invalid(`data-modifying statements in WITH (${cte.query.kind.toUpperCase()} in "${name}") are not supported`, { reason: 'unsupported', name });
    }
    const query = cte.query;
    if (clause.recursive && refersTo(query, name)) {
      scope.ctes.set(name, bindRecursiveCte(binder, name, query, cte.columns, scope));
      continue;
    }
    // Its body sees the CTEs before it and the enclosing queries' ones (its own name: an enclosing CTE or a table).
    const body = scope.sibling();
    const q = binder.bindQuery(query, body);
    scope.adopt(body);
    if (cte.columns && cte.columns.length > q.names.length) {
      throw invalid(`WITH query "${name}" has ${q.names.length} columns available but ${cte.columns.length} columns specified`, { name });
    }
    const names = q.names.map((n, i) => cte.columns?.[i] ?? n);
    scope.ctes.set(name, { name, plan: q.plan, columnNames: names });
  }
}

/**
 * WITH RECURSIVE lets a member read any other member, later ones included (PostgreSQL orders them
 * by dependency): members are bound after the ones they read, in written order otherwise.
 * Members reading each other in a cycle are refused, as PostgreSQL does.
 */
function dependencyOrder(ctes: readonly CommonTableExpr[]): CommonTableExpr[] {
  const reads = new Map(ctes.map((c) => [c.name, ctes.filter((o) => o.name !== c.name && refersTo(c.query, o.name)).map((o) => o.name)]));
  const done = new Set<string>();
  const order: CommonTableExpr[] = [];
  const visit = (cte: CommonTableExpr, path: readonly string[]): void => {
    if (done.has(cte.name)) return;
    if (path.includes(cte.name)) throw invalid('mutual recursion between WITH items is not implemented', { reason: 'unsupported', name: cte.name });
    for (const dep of reads.get(cte.name)!)
      visit(
        ctes.find((c) => c.name === dep)!,
        [...path, cte.name],
      );
    done.add(cte.name);
    order.push(cte);
  };
  for (const cte of ctes) visit(cte, []);
  return order;
}

function isQuery(q: QueryExpr | { readonly kind: 'insert' | 'update' | 'delete' }): q is QueryExpr {
  return q.kind === 'select' || q.kind === 'values' || q.kind === 'set_op';
}
