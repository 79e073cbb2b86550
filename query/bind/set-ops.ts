import type { AstNode } from '../parse/index.js';
import type { Expr, SortKey } from '../plan/expr.js';
import type { OutputColumn, Plan } from '../plan/nodes.js';
import { unify } from './coerce.js';
import { invalid } from './context.js';
import { bindSortKeys } from './functions.js';
import { identName } from './names.js';
import { Scope } from './scope.js';
import type { BoundQuery, SelectBinder as QueryBinder } from './bound.js';

type SetOpName = 'union' | 'intersect' | 'except';

/** s1 UNION [ALL] s2 INTERSECT s3 ... ORDER BY ... LIMIT: INTERSECT binds tighter, the rest left to right. */
export function bindSetOperation(ast: AstNode, scope: Scope, binder: QueryBinder): BoundQuery {
  const members: AstNode[] = [];
  const ops: { op: SetOpName; all: boolean }[] = [];
  for (let node: AstNode | undefined = ast; node; node = node._next) {
    members.push(node);
    if (node._next) ops.push(parseOp(String(node.set_op)));
  }
  const last = members[members.length - 1]!;
  const bound = members.map((m) => {
    const member = scope.sibling();
    const q = binder.bindSelect(m, member, false);
    scope.adopt(member);
    return q;
  });
  // INTERSECT first.
  const queries: BoundQuery[] = [bound[0]!];
  const rest: { op: SetOpName; all: boolean }[] = [];
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    if (op.op === 'intersect') queries[queries.length - 1] = combine(binder, queries[queries.length - 1]!, bound[i + 1]!, op);
    else {
      queries.push(bound[i + 1]!);
      rest.push(op);
    }
  }
  let result = queries[0]!;
  for (let i = 0; i < rest.length; i++) result = combine(binder, result, queries[i + 1]!, rest[i]!);
  return applyTail(binder, result, last);
}

function parseOp(text: string): { op: SetOpName; all: boolean } {
  const words = text.toLowerCase().split(/\s+/);
  const op = words[0] as SetOpName;
  if (op !== 'union' && op !== 'intersect' && op !== 'except') throw invalid(`unsupported set operation ${text}`);
  return { op, all: words.includes('all') };
}

function combine(binder: QueryBinder, left: BoundQuery, right: BoundQuery, op: { op: SetOpName; all: boolean }): BoundQuery {
  const lc = left.plan.columns;
  const rc = right.plan.columns;
  if (lc.length !== rc.length) throw invalid(`each ${op.op.toUpperCase()} query must have the same number of columns`);
  const leftExprs: Expr[] = [];
  const rightExprs: Expr[] = [];
  const columns: OutputColumn[] = [];
  for (let i = 0; i < lc.length; i++) {
    const l: Expr = { kind: 'column', type: lc[i]!.type, index: i, name: lc[i]!.name };
    const r: Expr = { kind: 'column', type: rc[i]!.type, index: i, name: rc[i]!.name };
    const unified = unify(binder.ctx, [l, r], op.op.toUpperCase());
    leftExprs.push(unified.exprs[0]!);
    rightExprs.push(unified.exprs[1]!);
    columns.push({ name: left.names[i]!, type: unified.type, nullable: lc[i]!.nullable || rc[i]!.nullable });
  }
  const cast = (plan: Plan, exprs: Expr[]): Plan =>
    exprs.every((e, i) => e.kind === 'column' && e.index === i) ? plan : { kind: 'project', input: plan, exprs, columns };
  const plan: Plan = { kind: 'setop', op: op.op, all: op.all, left: cast(left.plan, leftExprs), right: cast(right.plan, rightExprs), columns };
  return { plan, names: left.names };
}

/** ORDER BY / LIMIT of a set operation: output names or positions only. */
function applyTail(binder: QueryBinder, q: BoundQuery, last: AstNode): BoundQuery {
  let plan = q.plan;
  const items: AstNode[] = last.orderby ?? [];
  if (items.length > 0) {
    const env = binder.env(new Scope(null), 'ORDER BY', false);
    const keys: SortKey[] = items.map((item) => {
      const [key] = bindSortKeys([{ ...item, expr: { type: 'null' } }], env);
      const node = item.expr as AstNode;
      let index = -1;
      if (node.type === 'number') index = Number(node.value) - 1;
      else if (node.type === 'column_ref') index = q.names.indexOf(identName(node.column));
      const column = plan.columns[index];
      if (!column) throw invalid('invalid UNION/INTERSECT/EXCEPT ORDER BY clause: only result column names or positions can be used');
      return { ...key!, expr: { kind: 'column', type: column.type, index, name: column.name } };
    });
    plan = { kind: 'sort', input: plan, keys, columns: plan.columns };
  }
  plan = binder.applyLimit(plan, last.limit);
  return { plan, names: q.names };
}
