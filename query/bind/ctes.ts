import type { QueryExpr, WithClause } from '../parse/index.js';
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
  for (const cte of clause.ctes) {
    const name = cte.name;
    if (seen.has(name)) throw invalid(`WITH query name "${name}" specified more than once`, { name });
    seen.add(name);
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

function isQuery(q: QueryExpr | { readonly kind: 'insert' | 'update' | 'delete' }): q is QueryExpr {
  return q.kind === 'select' || q.kind === 'values' || q.kind === 'set_op';
}
