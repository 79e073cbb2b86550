import type { TableDef } from '../../core/catalog.js';
import type { AstNode } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import { shiftColumns } from '../plan/expr-util.js';
import type { JoinType, OutputColumn, Plan } from '../plan/nodes.js';
import { asCondition, unify, resolveUnknown } from './coerce.js';
import { invalid, type BindContext } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { functionName, identName } from './names.js';
import { bindSeries, isSetReturningCall } from './table-function.js';
import { Scope, type ScopeColumn } from './scope.js';
import { bindWorktable, checkOuterJoinRefs } from './recursive-cte.js';
import { usingCondition } from './using.js';

/** Binds a whole query (SELECT with set operations, CTEs, ORDER BY, LIMIT) in a scope. */
export type QueryBinder = (ast: AstNode, scope: Scope) => { plan: Plan; names: readonly string[] };

export interface FromDeps {
  readonly ctx: BindContext;
  readonly bindQuery: QueryBinder;
  readonly exprEnv: (scope: Scope, clause: string) => ExprEnv;
}

/** "x(a, b)" -> { alias: x, columns: [a, b] } (node-sql-parser keeps column aliases in the alias text). */
export function parseAlias(as: unknown): { alias: string | null; columns: string[] | null } {
  if (as === null || as === undefined) return { alias: null, columns: null };
  const text = typeof as === 'string' ? as : identName(as);
  const m = /^\s*("?)([^"(]+)\1\s*\((.*)\)\s*$/.exec(text);
  if (!m) return { alias: text.replace(/^"(.*)"$/, '$1'), columns: null };
  const columns = m[3]!
    .split(',')
    .map((c) => c.trim().replace(/^"(.*)"$/, '$1'))
    .filter((c) => c !== '');
  return { alias: m[2]!.trim(), columns };
}

function renamed(columns: readonly ScopeColumn[], names: readonly string[] | null): ScopeColumn[] {
  if (!names) return [...columns];
  if (names.length > columns.length) throw invalid(`table has ${columns.length} columns available but ${names.length} columns specified`);
  return columns.map((c, i) => (i < names.length ? { ...c, name: names[i]! } : c));
}

const JOIN_TYPES: Record<string, JoinType> = {
  'INNER JOIN': 'inner',
  JOIN: 'inner',
  'LEFT JOIN': 'left',
  'LEFT OUTER JOIN': 'left',
  'RIGHT JOIN': 'right',
  'RIGHT OUTER JOIN': 'right',
  'FULL JOIN': 'full',
  'FULL OUTER JOIN': 'full',
  'CROSS JOIN': 'cross',
};

/**
 * Binds the FROM list into one plan and registers each item in `scope`. A comma starts a new join
 * chain (PostgreSQL's comma binds looser than JOIN: `a, b RIGHT JOIN c` is a x (b RIGHT JOIN c));
 * the chains are then crossed in order, so the row is the items' columns in scope order.
 */
export function bindFrom(items: readonly AstNode[], scope: Scope, deps: FromDeps): Plan {
  let head: Plan | null = null;
  let chain: Plan | null = null;
  let chainStart = scope.width;
  let chainRefs = deps.ctx.worktableRefs.length;
  for (const item of items) {
    const joinWord = String(item.join ?? '').toUpperCase();
    const before = scope.width;
    if (joinWord === '' || chain === null) {
      if (chain) head = head ? joinNode('cross', head, chain, null) : chain;
      chainStart = before;
      chainRefs = deps.ctx.worktableRefs.length;
      chain = bindFromItem(item, scope, deps);
      continue;
    }
    const itemRefs = deps.ctx.worktableRefs.length;
    const right = bindFromItem(item, scope, deps);
    let joinType: JoinType = JOIN_TYPES[joinWord] ?? unsupportedJoin(joinWord);
    checkOuterJoinRefs(deps.ctx, joinType, chainRefs, itemRefs);
    let on: Expr | null = null;
    if (item.using) on = usingCondition(deps.ctx, item.using, scope, chainStart, before, joinType);
    else if (item.on) on = asCondition(deps.ctx, bindExpr(item.on, deps.exprEnv(scope, 'JOIN conditions')), 'JOIN');
    else if (joinType !== 'cross') throw invalid(`${joinWord} requires an ON or USING clause`);
    // CROSS JOIN arrives as JOIN ... ON true (see parse/preprocess.ts); NATURAL JOIN without common columns as no condition.
    if (joinType === 'inner' && (on === null || (on.kind === 'const' && on.value === true))) [joinType, on] = ['cross', null];
    // Conditions were bound against the whole FROM row; the join sees the chain's row only.
    chain = joinNode(joinType, chain, right, on && shiftColumns(on, -chainStart));
  }
  if (!chain) throw invalid('empty FROM clause');
  return head ? joinNode('cross', head, chain, null) : chain;
}

function unsupportedJoin(word: string): never {
  throw invalid(`unsupported join type: ${word}`);
}

export function joinNode(joinType: JoinType, left: Plan, right: Plan, on: Expr | null): Plan {
  const nullableLeft = joinType === 'right' || joinType === 'full';
  const nullableRight = joinType === 'left' || joinType === 'full';
  const columns: OutputColumn[] = [
    ...left.columns.map((c) => (nullableLeft ? { ...c, nullable: true } : c)),
    ...right.columns.map((c) => (nullableRight ? { ...c, nullable: true } : c)),
  ];
  return { kind: 'join', joinType, left, right, on, hash: null, columns };
}

function bindFromItem(item: AstNode, scope: Scope, deps: FromDeps): Plan {
  const { alias, columns: aliasColumns } = parseAlias(item.as);
  if (item.expr?.ast) {
    const lateral = item.prefix === 'lateral';
    let inner = scope.sibling();
    if (lateral) {
      inner = new Scope(scope);
      for (const [name, cte] of scope.ctes) inner.ctes.set(name, cte);
    }
    const referenced = scope.referencedFromInner;
    scope.referencedFromInner = false;
    const { plan, names } = deps.bindQuery(item.expr.ast, inner);
    if (!lateral) scope.adopt(inner);
    // Executing it would need a join that re-runs the subquery per left row (not built yet).
    if (lateral && scope.referencedFromInner)
      throw invalid('LATERAL subqueries that reference earlier FROM items are not supported', { reason: 'unsupported' });
    scope.referencedFromInner ||= referenced;
    if (alias === null) throw invalid('subquery in FROM must have an alias');
    const cols = renamed(
      plan.columns.map((c, i) => ({ name: names[i]!, type: c.type, nullable: c.nullable })),
      aliasColumns,
    );
    scope.add(alias, cols);
    return plan;
  }
  if (item.expr?.type === 'function') {
    if (!isSetReturningCall(item.expr)) throw invalid(`function ${functionName(item.expr).name}() in FROM is not supported`, { reason: 'unsupported' });
    const plan = bindSeries(item.expr, deps.exprEnv(scope, 'functions in FROM'), aliasColumns?.[0] ?? alias ?? 'generate_series');
    scope.add(alias ?? 'generate_series', renamed(plan.columns, aliasColumns));
    return plan;
  }
  if (item.expr?.type === 'values') return bindValuesItem(item.expr, alias ?? 'values', aliasColumns, scope, deps);
  if (item.expr?.type === 'tables') return bindJoinedTable(item.expr.expr, alias, aliasColumns, scope, deps);
  if (item.table === undefined) throw invalid('unsupported FROM item');
  const schema = item.db ? identName(item.db) : null;
  const name = identName(item.table);
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
  if (entry.def.kind !== 'table') return bindView(entry.def, alias ?? name, aliasColumns, scope, deps);
  const columns = entry.def.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }));
  scope.add(alias ?? name, renamed(columns, aliasColumns), alias === null ? name : undefined);
  return scanOf(entry.def, alias ?? name, false);
}

/**
 * (a JOIN b ON ...) [AS j], bound in a scope of its own (its join conditions index its own row).
 * Without an alias its items are then visible in the enclosing FROM scope (a.x, b.x), as in
 * PostgreSQL; with one, only j's columns are: the joined row without the right copies of USING
 * columns, as PostgreSQL's join alias shows them.
 */
function bindJoinedTable(items: readonly AstNode[], alias: string | null, aliasColumns: string[] | null, scope: Scope, deps: FromDeps): Plan {
  const inner = scope.sibling();
  const input = bindFrom(items, inner, deps);
  scope.adopt(inner);
  if (alias === null) {
    const offset = scope.width;
    const order = [...scope.starOrder];
    for (const e of inner.entries) scope.add(e.alias, e.columns, e.tableName);
    for (const [index, e] of inner.usingOverrides) scope.usingOverrides.set(index + offset, shiftColumns(e, offset));
    scope.starOrder = [...order, ...inner.starOrder.map((slot) => slot + offset)];
    return input;
  }
  const visible = inner.starOrder.map((index) => ({ c: inner.columnAt(index), index })).filter((x) => !x.c.hidden);
  const exprs: Expr[] = visible.map(({ c, index }) => inner.usingOverrides.get(index) ?? { kind: 'column', type: c.type, index, name: c.name });
  const columns: OutputColumn[] = visible.map(({ c }, i) => ({ name: c.name, type: exprs[i]!.type, nullable: c.nullable }));
  scope.add(alias, renamed(columns, aliasColumns));
  return { kind: 'project', input, exprs, columns };
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

function bindView(def: TableDef, alias: string, aliasColumns: string[] | null, scope: Scope, deps: FromDeps): Plan {
  const key = `${def.schema}.${def.name}`;
  if (deps.ctx.expanding.includes(key)) throw invalid(`infinite recursion detected in rules for relation "${def.name}"`);
  deps.ctx.expanding.push(key);
  try {
    const ast = deps.ctx.parseView(def.viewSql ?? '');
    const { plan, names } = deps.bindQuery(ast, new Scope(null));
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
export function bindValuesRows(rows: readonly AstNode[], scope: Scope, deps: FromDeps): { plan: Plan; names: string[] } {
  const env = deps.exprEnv(scope, 'VALUES');
  const bound = rows.map((r) => (r.value as AstNode[]).map((v) => bindExpr(v, env)));
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

function bindValuesItem(node: AstNode, alias: string, aliasColumns: string[] | null, scope: Scope, deps: FromDeps): Plan {
  const inner = scope.sibling();
  const { plan, names } = bindValuesRows(node.values ?? [], inner, deps);
  scope.adopt(inner);
  scope.add(
    alias,
    renamed(
      plan.columns.map((c, i) => ({ name: names[i]!, type: c.type, nullable: c.nullable })),
      aliasColumns,
    ),
  );
  return plan;
}
