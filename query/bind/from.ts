import type { TableDef } from '../../core/catalog.js';
import type { SvcError } from '../../core/errors.js';
import type { Alias, FromItem, JoinExpr, QueryExpr, SqlExpr, SubqueryRef, TableRef } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import { shiftColumns, someExpr } from '../plan/expr-util.js';
import type { JoinType, OutputColumn, Plan } from '../plan/nodes.js';
import { asCondition, unify, resolveUnknown } from './coerce.js';
import { invalid, type BindContext } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { bindFunctionItem } from './table-function.js';
import { renamedColumns as renamed, Scope } from './scope.js';
import { bindWorktable, checkOuterJoinRefs } from './recursive-cte.js';
import { usingAliasColumns, usingCondition } from './using.js';

/** Binds a whole query (SELECT with set operations, CTEs, ORDER BY, LIMIT) in a scope. */
export type QueryBinder = (query: QueryExpr, scope: Scope) => { plan: Plan; names: readonly string[] };

export interface FromDeps {
  readonly ctx: BindContext;
  readonly bindQuery: QueryBinder;
  readonly exprEnv: (scope: Scope, clause: string) => ExprEnv;
}

/**
 * Binds the FROM list into one plan and registers each item in `scope`: the items are crossed in
 * order, so the row is the items' columns in scope order (a join's: its left side's, then its right's).
 */
export function bindFrom(items: readonly FromItem[], scope: Scope, deps: FromDeps): Plan {
  let plan: Plan | null = null;
  for (const item of items) {
    const next = bindFromItem(item, scope, deps);
    plan = plan ? joinNode('cross', plan, next, null, LATERAL.has(next) ? 0 : undefined) : next;
  }
  if (!plan) throw invalid('empty FROM clause');
  return plan;
}

/** Plans of FROM items that read items before them (LATERAL): their join re-runs them per left row. */
const LATERAL = new WeakSet<Plan>();

export function joinNode(joinType: JoinType, left: Plan, right: Plan, on: Expr | null, lateral?: number): Plan {
  const nullableLeft = joinType === 'right' || joinType === 'full';
  const nullableRight = joinType === 'left' || joinType === 'full';
  const columns: OutputColumn[] = [
    ...left.columns.map((c) => (nullableLeft ? { ...c, nullable: true } : c)),
    ...right.columns.map((c) => (nullableRight ? { ...c, nullable: true } : c)),
  ];
  return { kind: 'join', joinType, left, right, on, hash: null, columns, ...(lateral === undefined ? {} : { lateral }) };
}

function bindFromItem(item: FromItem, scope: Scope, deps: FromDeps): Plan {
  switch (item.kind) {
    case 'table':
      return bindTableRef(item, scope, deps);
    case 'subquery':
      return bindSubqueryItem(item, scope, deps);
    case 'function':
      return lateralItem(scope, (inner) => bindFunctionItem(item, scope, deps.exprEnv(inner, 'functions in FROM')));
    case 'join':
      return item.alias ? bindJoinedTable(item, item.alias, scope, deps) : bindJoin(item, scope, deps);
  }
}

/**
 * `left [NATURAL] JOIN right ON ... | USING (...) [AS j]`: both sides registered in `scope`, the
 * condition bound against the whole FROM row, then shifted to the join's own row (it may not
 * read items left of the join: PostgreSQL's "invalid reference to FROM-clause entry").
 */
function bindJoin(item: JoinExpr, scope: Scope, deps: FromDeps): Plan {
  const start = scope.width;
  const chainRefs = deps.ctx.worktableRefs.length;
  const left = bindFromItem(item.left, scope, deps);
  const rightStart = scope.width;
  const itemRefs = deps.ctx.worktableRefs.length;
  if (LATERAL.has(left)) throw lateralOutsideJoin();
  const right = bindFromItem(item.right, scope, deps);
  let joinType: JoinType = item.type;
  checkOuterJoinRefs(deps.ctx, joinType, chainRefs, itemRefs);
  let on: Expr | null = null;
  let merged: number[] = [];
  if (item.natural || item.using) {
    const using = usingCondition(deps.ctx, item.natural ? null : item.using, scope, start, rightStart, joinType);
    on = using.on;
    merged = using.merged;
  } else if (item.on) {
    on = asCondition(deps.ctx, bindExpr(item.on, deps.exprEnv(scope, 'JOIN conditions')), 'JOIN');
    if (someExpr(on, (e) => e.kind === 'column' && e.index < start)) {
      const slot = firstColumnBelow(on, start);
      const entry = scope.entries.find((e) => slot >= e.offset && slot < e.offset + e.columns.length);
      throw invalid(`invalid reference to FROM-clause entry for table "${entry?.alias ?? '?'}"`, { reason: 'outside_join' });
    }
  } else if (joinType !== 'cross') throw invalid(`${joinType.toUpperCase()} JOIN requires an ON or USING clause`);
  // NATURAL JOIN without common columns has no condition: every pair.
  if (joinType === 'inner' && (on === null || (on.kind === 'const' && on.value === true))) [joinType, on] = ['cross', null];
  markNullable(scope, joinType, start, rightStart);
  const lateral = LATERAL.has(right) ? lateralOffset(scope, joinType, start) : undefined;
  const plan = joinNode(joinType, left, right, on && shiftColumns(on, -start), lateral);
  if (item.usingAlias === null) return plan;
  return usingAliasColumns(scope, item.usingAlias, merged, plan, start);
}

/** Notes the FROM items an outer join may fill with NULLs (left side [start, rightStart), right side after). */
function markNullable(scope: Scope, joinType: JoinType, start: number, rightStart: number): void {
  const left = joinType === 'right' || joinType === 'full';
  const right = joinType === 'left' || joinType === 'full';
  for (const e of scope.entries) {
    if ((left && e.offset >= start && e.offset < rightStart) || (right && e.offset >= rightStart)) scope.nullableAliases.add(e.alias);
  }
}

function firstColumnBelow(expr: Expr, start: number): number {
  let slot = -1;
  someExpr(expr, (e) => {
    if (e.kind === 'column' && e.index < start) slot = e.index;
    return slot >= 0;
  });
  return slot;
}

/**
 * (a JOIN b ON ...) AS j, bound in a scope of its own (its join conditions index its own row):
 * only j's columns are visible, the joined row without the right copies of USING columns, as
 * PostgreSQL's join alias shows them.
 */
function bindJoinedTable(item: JoinExpr, alias: Alias, scope: Scope, deps: FromDeps): Plan {
  const inner = scope.sibling();
  const input = bindJoin({ ...item, alias: null }, inner, deps);
  scope.adopt(inner);
  const visible = inner.starOrder.map((index) => ({ c: inner.columnAt(index), index })).filter((x) => !x.c.hidden);
  const exprs: Expr[] = visible.map(({ c, index }) => inner.usingOverrides.get(index) ?? { kind: 'column', type: c.type, index, name: c.name });
  const columns: OutputColumn[] = visible.map(({ c }, i) => ({ name: c.name, type: exprs[i]!.type, nullable: c.nullable }));
  scope.add(alias.name, renamed(columns, alias.columns));
  return { kind: 'project', input, exprs, columns };
}

function bindTableRef(item: TableRef, scope: Scope, deps: FromDeps): Plan {
  const alias = item.alias?.name ?? null;
  const aliasColumns = item.alias?.columns ?? null;
  const { schema, name } = item.name;
  const cte = schema === null ? scope.cte(name) : undefined;
  if (cte?.recursive) return bindWorktable(deps.ctx, cte.recursive, alias ?? name, aliasColumns, scope, renamed);
  if (cte) {
    const cols = renamed(
      cte.plan.columns.map((c, i) => ({ name: cte.columnNames[i]!, type: c.type, nullable: c.nullable })),
      aliasColumns,
    );
    scope.add(alias ?? name, cols);
    return cte.plan;
  }
  const entry = deps.ctx.table(schema, name);
  if (entry.def.kind === 'view') return bindView(entry.def, alias ?? name, aliasColumns, scope, deps);
  const columns = entry.def.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }));
  scope.add(alias ?? name, renamed(columns, aliasColumns), alias === null ? name : undefined);
  return scanOf(entry.def, alias ?? name, false);
}

/**
 * (SELECT ...) [AS] x(a, b), VALUES lists included. Without LATERAL it sees the enclosing
 * queries but not this FROM clause; with LATERAL it may see the items before it, which is
 * refused when it does (executing it needs a join that re-runs the subquery per left row).
 */
function bindSubqueryItem(item: SubqueryRef, scope: Scope, deps: FromDeps): Plan {
  if (!item.lateral) {
    const inner = scope.sibling();
    const bound = deps.bindQuery(item.query, inner);
    scope.adopt(inner);
    return addSubquery(item, scope, bound);
  }
  return lateralItem(scope, (inner) => addSubquery(item, scope, deps.bindQuery(item.query, inner)));
}

/**
 * Binds a FROM item that may read the items before it (a LATERAL subquery, a function): in a
 * scope whose parent is this FROM clause, so such a reference is an outer reference of depth 1
 * into the FROM row; when there is one, the plan is marked for a LATERAL join.
 */
function lateralItem(scope: Scope, bind: (inner: Scope) => Plan): Plan {
  const inner = new Scope(scope);
  for (const [name, cte] of scope.ctes) inner.ctes.set(name, cte);
  const referenced = scope.referencedFromInner;
  scope.referencedFromInner = false;
  scope.lowestInnerRef = Number.POSITIVE_INFINITY;
  const plan = bind(inner);
  const readsFrom = scope.referencedFromInner;
  scope.referencedFromInner ||= referenced;
  if (readsFrom) LATERAL.add(plan);
  if (readsFrom || !inner.usedOuter) return plan;
  // It reads only enclosing queries, one level further up than a plain item: run it under an
  // empty outer row so that its references still find them.
  return { kind: 'join', joinType: 'cross', left: { kind: 'one_row', columns: [] }, right: plan, on: null, hash: null, columns: plan.columns, lateral: 0 };
}

/** Where the left row of a LATERAL join starts in the FROM row; the item may not read further left (PostgreSQL's rules). */
function lateralOffset(scope: Scope, joinType: JoinType, start: number): number {
  if (joinType === 'right' || joinType === 'full') {
    const entry = scope.entries.find((e) => scope.lowestInnerRef >= e.offset && scope.lowestInnerRef < e.offset + e.columns.length);
    throw invalid(`invalid reference to FROM-clause entry for table "${entry?.alias ?? '?'}"`, {
      reason: 'lateral_join_type',
      detail: 'The combining JOIN type must be INNER or LEFT for a LATERAL reference.',
    });
  }
  if (scope.lowestInnerRef < start) throw lateralOutsideJoin();
  return start;
}

/** PostgreSQL runs such a JOIN again per row of the items before it; svcdb's joins cannot. */
function lateralOutsideJoin(): SvcError {
  return invalid('LATERAL references to FROM items outside the JOIN are not supported', { reason: 'unsupported' });
}

function addSubquery(item: SubqueryRef, scope: Scope, { plan, names }: { plan: Plan; names: readonly string[] }): Plan {
  const cols = renamed(
    plan.columns.map((c, i) => ({ name: names[i]!, type: c.type, nullable: c.nullable })),
    item.alias?.columns,
  );
  // PostgreSQL 16 and later accept a subquery without an alias; its columns are then unqualified only.
  scope.add(item.alias?.name ?? `unnamed_subquery#${scope.entries.length}`, cols);
  return plan;
}

/** Hidden columns a DML scan appends: the encoded primary key and the stored row image. */
export const KEY_COLUMNS = [
  { name: '__key', type: { name: 'unknown' as const }, nullable: false, hidden: true },
  { name: '__image', type: { name: 'unknown' as const }, nullable: false, hidden: true },
];

export function scanOf(def: TableDef, alias: string, withKey: boolean): Plan {
  const columns = def.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }));
  return {
    kind: 'scan',
    table: def,
    alias,
    columns: withKey ? [...columns, ...KEY_COLUMNS] : columns,
    withKey,
    filter: null,
    access: { kind: 'seq', reverse: false },
  };
}

function bindView(def: TableDef, alias: string, aliasColumns: readonly string[] | null, scope: Scope, deps: FromDeps): Plan {
  const key = `${def.schema}.${def.name}`;
  if (deps.ctx.expanding.includes(key)) throw invalid(`infinite recursion detected in rules for relation "${def.name}"`);
  deps.ctx.expanding.push(key);
  try {
    const query = deps.ctx.parseView(def.viewSql ?? '');
    const { plan, names } = deps.bindQuery(query, new Scope(null));
    const cols = renamed(
      plan.columns.map((c, i) => ({ name: def.columns[i]?.name ?? names[i]!, type: c.type, nullable: c.nullable })),
      aliasColumns,
    );
    scope.add(alias, cols, alias === def.name ? def.name : undefined);
    return plan;
  } finally {
    deps.ctx.expanding.pop();
  }
}

/** VALUES (...), (...): column types unified per position like PostgreSQL. */
export function bindValuesRows(rows: readonly (readonly SqlExpr[])[], scope: Scope, deps: FromDeps): { plan: Plan; names: string[] } {
  const env = deps.exprEnv(scope, 'VALUES');
  const bound = rows.map((r) => r.map((v) => bindExpr(v, env)));
  const width = bound[0]?.length ?? 0;
  if (bound.some((r) => r.length !== width)) throw invalid('VALUES lists must all be the same length');
  const columns: OutputColumn[] = [];
  const byColumn: Expr[][] = bound.map(() => []);
  for (let c = 0; c < width; c++) {
    const unified = unify(
      deps.ctx,
      bound.map((r) => r[c]!),
      'VALUES',
    );
    const exprs = unified.exprs.map((e) => resolveUnknown(deps.ctx, e));
    exprs.forEach((e, r) => byColumn[r]!.push(e));
    columns.push({ name: `column${c + 1}`, type: exprs[0]!.type, nullable: true });
  }
  return { plan: { kind: 'values', rows: byColumn, columns }, names: columns.map((c) => c.name) };
}
