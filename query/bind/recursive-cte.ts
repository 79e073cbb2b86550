import { pgTypeName } from '../types/index.js';
import type { QueryExpr } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import type { JoinType, OutputColumn, Plan } from '../plan/nodes.js';
import { sameType, unify } from './coerce.js';
import { invalid, mismatch, type BindContext } from './context.js';
import { Scope, type CteDef, type RecursiveCte, type ScopeColumn } from './scope.js';
import type { BoundQuery, SelectBinder } from './bound.js';

/**
 * WITH RECURSIVE name AS (non-recursive term UNION [ALL] recursive term), checked the way
 * PostgreSQL's parse_cte.c checks it: the self-reference only in the recursive term, once, not in
 * a subquery expression, in INTERSECT/EXCEPT or on the nullable side of an outer join, no
 * aggregates beside it, no ORDER BY/LIMIT/OFFSET on the whole; the column types are the
 * non-recursive term's and the recursive term must produce them. Bound to a recursive_union plan
 * (exec/ops/recursive-union.ts).
 */
export function bindRecursiveCte(binder: SelectBinder, name: string, query: QueryExpr, aliasColumns: readonly string[] | null, scope: Scope): CteDef {
  const ctx = binder.ctx;
  const { nonRecursive, recursive, all } = splitTerms(name, query);
  const self: RecursiveCte = { id: ctx.subqueryId(), name, phase: 'non_recursive', columns: [], refs: 0, sublinkDepth: 0 };
  const term = (): Scope => {
    const s = scope.sibling();
    s.ctes.set(name, { name, plan: { kind: 'one_row', columns: [] }, columnNames: [], recursive: self });
    return s;
  };
  const leftScope = term();
  const left = binder.bindQuery(nonRecursive, leftScope);
  scope.adopt(leftScope);
  if (aliasColumns && aliasColumns.length > left.names.length) {
    throw invalid(`WITH query "${name}" has ${left.names.length} columns available but ${aliasColumns.length} columns specified`, { name });
  }
  const names = left.names.map((n, i) => aliasColumns?.[i] ?? n);
  self.columns = left.plan.columns.map((c, i) => ({ name: names[i]!, type: c.type, nullable: true }));
  self.phase = 'recursive';
  self.sublinkDepth = ctx.sublinkDepth;
  const rightScope = term();
  const right = binder.bindQuery(recursive, rightScope);
  scope.adopt(rightScope);
  // Only a shadowing inner WITH of the same name hid the reference: an ordinary query after all.
  if (self.refs === 0) return { name, plan: binder.bindQuery(query, scope.sibling()).plan, columnNames: names };
  const plan: Plan = {
    kind: 'recursive_union',
    id: self.id,
    name,
    all,
    left: left.plan,
    right: castRecursiveTerm(ctx, name, right, self.columns),
    columns: self.columns,
  };
  return { name, plan, columnNames: names };
}

/** Whether a query reads a FROM item called `name` anywhere (the cue that a WITH RECURSIVE member is recursive). */
export function refersTo(node: unknown, name: string): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((n) => refersTo(n, name));
  const n = node as { kind?: unknown; name?: unknown };
  if (n.kind === 'table') {
    const q = n.name as { schema: string | null; name: string };
    if (q.schema === null && q.name === name) return true;
  }
  return Object.values(node).some((v) => refersTo(v, name));
}

/**
 * The top-level UNION [ALL] splits the query: its left operand is the non-recursive term, its
 * right operand the recursive term (PostgreSQL's grammar nests `a UNION b UNION c` as
 * (a UNION b) UNION c, so only the last member may be recursive).
 */
function splitTerms(name: string, query: QueryExpr): { nonRecursive: QueryExpr; recursive: QueryExpr; all: boolean } {
  if (query.kind !== 'set_op' || query.op !== 'union')
    throw invalid(`recursive query "${name}" does not have the form non-recursive-term UNION [ALL] recursive-term`, { name });
  if (query.orderBy.length > 0) throw invalid('ORDER BY in a recursive query is not implemented', { reason: 'unsupported' });
  if (query.offset) throw invalid('OFFSET in a recursive query is not implemented', { reason: 'unsupported' });
  if (query.limit) throw invalid('LIMIT in a recursive query is not implemented', { reason: 'unsupported' });
  if (query.locking.length > 0) throw invalid('FOR UPDATE/SHARE in a recursive query is not implemented', { reason: 'unsupported' });
  checkNotWithin(query.right, name);
  return { nonRecursive: query.left, recursive: query.right, all: query.all };
}

/** A self-reference inside an INTERSECT or EXCEPT of the recursive term is refused, as PostgreSQL does. */
function checkNotWithin(query: QueryExpr, name: string): void {
  if (query.kind !== 'set_op') return;
  if (query.op !== 'union' && refersTo(query, name)) {
    throw invalid(`recursive reference to query "${name}" must not appear within ${query.op.toUpperCase()}`, { name });
  }
  checkNotWithin(query.left, name);
  checkNotWithin(query.right, name);
}

/** The recursive term's columns converted to the non-recursive term's types, which must be the union's. */
function castRecursiveTerm(ctx: BindContext, name: string, right: BoundQuery, columns: readonly OutputColumn[]): Plan {
  const rc = right.plan.columns;
  if (rc.length !== columns.length) throw invalid('each UNION query must have the same number of columns');
  const exprs: Expr[] = rc.map((c, i) => {
    const l: Expr = { kind: 'column', type: columns[i]!.type, index: i, name: c.name };
    const r: Expr = { kind: 'column', type: c.type, index: i, name: c.name };
    const unified = unify(ctx, [l, r], 'UNION');
    if (!sameType(unified.type, columns[i]!.type)) {
      throw mismatch(
        `recursive query "${name}" column ${i + 1} has type ${pgTypeName(columns[i]!.type)} in non-recursive term but type ${pgTypeName(unified.type)} overall`,
        {
          hint: 'Cast the output of the non-recursive term to the correct type.',
        },
      );
    }
    return unified.exprs[1]!;
  });
  if (exprs.every((e, i) => e.kind === 'column' && e.index === i)) return right.plan;
  return { kind: 'project', input: right.plan, exprs, columns: columns.map((c, i) => ({ ...c, name: rc[i]!.name })) };
}

/**
 * A FROM item naming the recursive CTE being bound: its working table, where PostgreSQL allows
 * one. `sublinkDepth` tells a reference inside a subquery expression (refused) from one in a
 * FROM subquery (allowed).
 */
export function bindWorktable(
  ctx: BindContext,
  self: RecursiveCte,
  alias: string,
  aliasColumns: readonly string[] | null,
  scope: Scope,
  rename: (c: readonly ScopeColumn[], n: readonly string[] | null) => ScopeColumn[],
): Plan {
  const name = self.name;
  if (self.phase === 'non_recursive') throw invalid(`recursive reference to query "${name}" must not appear within its non-recursive term`, { name });
  if (ctx.sublinkDepth !== self.sublinkDepth) throw invalid(`recursive reference to query "${name}" must not appear within a subquery`, { name });
  if (self.refs > 0) throw invalid(`recursive reference to query "${name}" must not appear more than once`, { name });
  self.refs += 1;
  ctx.worktableRefs.push(name);
  scope.add(alias, rename(self.columns, aliasColumns));
  return { kind: 'worktable_scan', id: self.id, name, columns: self.columns };
}

/** Refuses a join whose nullable side holds a working-table reference (read since `chainStart`/`itemStart`). */
export function checkOuterJoinRefs(ctx: BindContext, joinType: JoinType, chainStart: number, itemStart: number): void {
  const refs = ctx.worktableRefs;
  const inChain = itemStart > chainStart;
  const inItem = refs.length > itemStart;
  const bad = (joinType === 'left' && inItem) || (joinType === 'right' && inChain) || (joinType === 'full' && (inChain || inItem));
  if (bad) {
    const name = refs[joinType === 'left' || (joinType === 'full' && inItem && !inChain) ? itemStart : chainStart]!;
    throw invalid(`recursive reference to query "${name}" must not appear within an outer join`, { name });
  }
}
