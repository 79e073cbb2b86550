import type { SetOperation } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import type { OutputColumn, Plan } from '../plan/nodes.js';
import { unify } from './coerce.js';
import { invalid } from './context.js';
import type { Scope } from './scope.js';
import { applyOutputTail } from './tail.js';
import type { BoundQuery, SelectBinder } from './bound.js';

/**
 * left UNION | INTERSECT | EXCEPT [ALL] right, then the operation's own ORDER BY / LIMIT. The
 * grammar already nested the operands (INTERSECT binds tighter; a parenthesized operand keeps its
 * own ORDER BY / LIMIT); each is bound on its own in a sibling scope. ALL keeps duplicates with
 * PostgreSQL's multiset counts (exec/ops/distinct.ts setOp).
 */
export function bindSetOperation(q: SetOperation, scope: Scope, binder: SelectBinder): BoundQuery {
  const member = (query: SetOperation['left']): BoundQuery => {
    const s = scope.sibling();
    const bound = binder.bindQuery(query, s, true);
    scope.adopt(s);
    return bound;
  };
  const combined = combine(binder, member(q.left), member(q.right), q.op, q.all);
  return applyOutputTail(binder, combined, q, 'UNION/INTERSECT/EXCEPT');
}

/** The set operation node of two bound queries, their columns converted to common types. */
export function combine(binder: SelectBinder, left: BoundQuery, right: BoundQuery, op: SetOperation['op'], all: boolean): BoundQuery {
  const lc = left.plan.columns;
  const rc = right.plan.columns;
  if (lc.length !== rc.length) throw invalid(`each ${op.toUpperCase()} query must have the same number of columns`);
  const leftExprs: Expr[] = [];
  const rightExprs: Expr[] = [];
  const columns: OutputColumn[] = [];
  for (let i = 0; i < lc.length; i++) {
    const l: Expr = { kind: 'column', type: lc[i]!.type, index: i, name: lc[i]!.name };
    const r: Expr = { kind: 'column', type: rc[i]!.type, index: i, name: rc[i]!.name };
    const unified = unify(binder.ctx, [l, r], op.toUpperCase());
    leftExprs.push(unified.exprs[0]!);
    rightExprs.push(unified.exprs[1]!);
    columns.push({ name: left.names[i]!, type: unified.type, nullable: lc[i]!.nullable || rc[i]!.nullable });
  }
  const cast = (plan: Plan, exprs: Expr[]): Plan =>
    exprs.every((e, i) => e.kind === 'column' && e.index === i) ? plan : { kind: 'project', input: plan, exprs, columns };
  const plan: Plan = { kind: 'setop', op, all, left: cast(left.plan, leftExprs), right: cast(right.plan, rightExprs), columns };
  return { plan, names: left.names };
}
