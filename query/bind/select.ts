import type { QType } from '../types/contract.js';
import { LIMIT_PARAM_BASE, parseExpression, type AstNode } from '../parse/index.js';
import { constant, INT8, type Expr, type SortKey } from '../plan/expr.js';
import { exprKey } from '../plan/expr-util.js';
import type { OutputColumn, Plan } from '../plan/nodes.js';
import { aggregateNode, collectAggregates, collectWindows, rewriteOverAggregate, rewriteOverWindow, windowNode } from './aggregate.js';
import { asCondition, coerce, resolveUnknown } from './coerce.js';
import { invalid, type BindContext } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { bindFrom, bindValuesRows, type FromDeps } from './from.js';
import { bindFunction, bindSortKeys } from './functions.js';
import { identName, outputName } from './names.js';
import { Scope } from './scope.js';
import { bindSetOperation } from './set-ops.js';
import { bindRecursiveCte, refersTo } from './recursive-cte.js';
import { bindSelectListSeries } from './table-function.js';
import type { BoundQuery, SelectBinder } from './bound.js';

export type { BoundQuery } from './bound.js';

/** Binds SELECT / VALUES / set operations with CTEs, ORDER BY and LIMIT. */
export class QueryBinder implements SelectBinder {
  readonly deps: FromDeps;

  constructor(readonly ctx: BindContext) {
    this.deps = {
      ctx,
      bindQuery: (ast, scope) => this.bindQuery(ast, scope),
      exprEnv: (scope, clause) => this.env(scope, clause, false),
    };
  }

  env(scope: Scope, clause: string, aggregates: boolean): ExprEnv {
    return {
      ctx: this.ctx,
      scope,
      clause,
      allowAggregates: aggregates,
      allowWindows: aggregates,
      bindSubquery: (ast, child) => {
        this.ctx.sublinkDepth += 1;
        try {
          const q = this.bindQuery(ast, child);
          return { plan: q.plan, types: q.plan.columns.map((c) => c.type) };
        } finally {
          this.ctx.sublinkDepth -= 1;
        }
      },
      bindFunction,
    };
  }

  bindQuery(ast: AstNode, scope: Scope): BoundQuery {
    if (ast.with) this.bindCtes(ast.with, scope);
    if (ast.type === 'values') return bindValuesRows(ast.values ?? [], scope, this.deps);
    if (ast._next) return bindSetOperation(ast, scope, this);
    return this.bindSelect(ast, scope, true);
  }

  private bindCtes(ctes: readonly AstNode[], scope: Scope): void {
    // node-sql-parser marks the first member only; RECURSIVE applies to the whole list.
    const recursive = ctes.some((c) => c.recursive);
    for (const cte of ctes) {
      const name = identName(cte.name);
      if (scope.ctes.has(name)) throw invalid(`WITH query name "${name}" specified more than once`, { name });
      const ast: AstNode = cte.stmt?.ast ?? cte.stmt;
      const columns: string[] | null = cte.columns ? cte.columns.map((c: AstNode) => identName(c.column ?? c)) : null;
      if (recursive && refersTo(ast, name)) {
        scope.ctes.set(name, bindRecursiveCte(this, name, ast, columns, scope));
        continue;
      }
      const body = scope.sibling();
      const q = this.bindQuery(ast, body);
      scope.adopt(body);
      if (columns && columns.length > q.names.length) {
        throw invalid(`WITH query "${name}" has ${q.names.length} columns available but ${columns.length} columns specified`, { name });
      }
      const names = q.names.map((n, i) => columns?.[i] ?? n);
      scope.ctes.set(name, { name, plan: q.plan, columnNames: names });
    }
  }

  /** One SELECT; `withTail` false leaves ORDER BY/LIMIT to a set operation. */
  bindSelect(ast: AstNode, scope: Scope, withTail: boolean): BoundQuery {
    const worktableRefs = this.ctx.worktableRefs.length;
    let plan: Plan = ast.from && ast.from.length > 0 ? bindFrom(ast.from, scope, this.deps) : { kind: 'one_row', columns: [] };
    if (ast.window) this.registerWindows(ast.window, scope);
    if (ast.where) {
      const predicate = asCondition(this.ctx, bindExpr(ast.where, this.env(scope, 'WHERE', false)), 'WHERE');
      plan = { kind: 'filter', input: plan, predicate, columns: plan.columns };
    }
    const series = bindSelectListSeries(ast.columns ?? [], scope, this.env(scope, 'SELECT', false), plan);
    if (series) plan = series.plan;
    const items = this.bindSelectList(series?.items ?? ast.columns ?? [], scope);
    let exprs = items.map((i) => i.expr);
    const names = items.map((i) => i.name);
    scope.aliases = new Map(names.map((n, i) => [n, exprs[i]!]));
    const groupBy = this.bindGroupBy(ast.groupby?.columns ?? ast.groupby ?? [], scope, exprs);
    const having = ast.having ? asCondition(this.ctx, bindExpr(ast.having, this.env(scope, 'HAVING', true)), 'HAVING') : null;
    const order = withTail ? this.bindOrderBy(ast.orderby ?? [], scope, exprs, names) : [];
    const distinctOn = this.bindDistinctOn(ast.distinct, scope, exprs);
    let orderExprs = order.map((o) => o.expr);
    let havingExpr = having;
    let onExprs = distinctOn;

    const aggs = collectAggregates([...exprs, ...(having ? [having] : []), ...orderExprs, ...(distinctOn ?? [])]);
    if (aggs.length > 0 && this.ctx.worktableRefs.length > worktableRefs)
      throw invalid("aggregate functions are not allowed in a recursive query's recursive term");
    if (aggs.length > 0 || groupBy.length > 0) {
      // PostgreSQL runs a select list's set-returning function after grouping; crossing is before.
      if (series) throw invalid('set-returning functions in the select list of a grouped query are not supported', { reason: 'unsupported' });
      const keys = groupBy.map(exprKey);
      const groupNames = groupBy.map((g) => (g.kind === 'column' ? g.name : '?column?'));
      const rewrite = (e: Expr): Expr => rewriteOverAggregate(e, keys, aggs, (i) => groupNames[i]!);
      plan = aggregateNode(plan, groupBy, aggs, groupNames);
      exprs = exprs.map(rewrite);
      orderExprs = orderExprs.map(rewrite);
      havingExpr = havingExpr ? rewrite(havingExpr) : null;
      onExprs = onExprs?.map(rewrite) ?? null;
      if (havingExpr) plan = { kind: 'filter', input: plan, predicate: havingExpr, columns: plan.columns };
    } else if (having) {
      plan = { kind: 'filter', input: plan, predicate: having, columns: plan.columns };
    }

    const windows = collectWindows([...exprs, ...orderExprs]);
    if (windows.calls.length > 0) {
      if (series) throw invalid('set-returning functions in the select list of a query with window functions are not supported', { reason: 'unsupported' });
      const width = plan.columns.length;
      plan = windowNode(plan, windows.calls, windows.nodes);
      exprs = exprs.map((e) => rewriteOverWindow(e, windows.keys, width));
      orderExprs = orderExprs.map((e) => rewriteOverWindow(e, windows.keys, width));
    }
    exprs = exprs.map((e) => resolveUnknown(this.ctx, e));
    const sortKeys: SortKey[] = order.map((o, i) => ({ ...o, expr: orderExprs[i]! }));
    return this.finishSelect(plan, exprs, names, sortKeys, onExprs, ast, withTail);
  }

  private finishSelect(input: Plan, exprs: Expr[], names: string[], order: SortKey[], distinctOn: Expr[] | null, ast: AstNode, withTail: boolean): BoundQuery {
    const distinct = String(ast.distinct?.type ?? '').toUpperCase() === 'DISTINCT';
    const keys = exprs.map(exprKey);
    const extra: Expr[] = [];
    const sortRefs = order.map((o) => {
      const at = keys.indexOf(exprKey(o.expr));
      if (at >= 0) return at;
      if (distinct) throw invalid('for SELECT DISTINCT, ORDER BY expressions must appear in select list');
      extra.push(o.expr);
      return exprs.length + extra.length - 1;
    });
    const onRefs = (distinctOn ?? []).map((e) => {
      const at = [...keys, ...extra.map(exprKey)].indexOf(exprKey(e));
      if (at >= 0) return at;
      extra.push(e);
      return exprs.length + extra.length - 1;
    });
    const all = [...exprs, ...extra];
    const columns: OutputColumn[] = all.map((e, i) => ({ name: names[i] ?? '?column?', type: e.type, nullable: nullableOf(e, input) }));
    let plan: Plan = { kind: 'project', input, exprs: all, columns };
    const col = (i: number): Expr => ({ kind: 'column', type: all[i]!.type, index: i, name: columns[i]!.name });
    const sortKeys: SortKey[] = order.map((o, i) => ({ ...o, expr: col(sortRefs[i]!) }));
    if (distinct) plan = { kind: 'distinct', input: plan, on: null, columns };
    if (distinctOn) {
      const prefix = onRefs.map((r) => ({ expr: col(r), descending: false, nullsFirst: false }));
      const leading = sortRefs.slice(0, Math.min(sortRefs.length, onRefs.length));
      if (leading.some((r) => !onRefs.includes(r))) throw invalid('SELECT DISTINCT ON expressions must match initial ORDER BY expressions');
      const keysOrder = sortKeys.length > 0 ? sortKeys : prefix;
      plan = { kind: 'sort', input: plan, keys: keysOrder, columns };
      plan = { kind: 'distinct', input: plan, on: onRefs.map(col), columns };
    } else if (sortKeys.length > 0) {
      plan = { kind: 'sort', input: plan, keys: sortKeys, columns };
    }
    if (withTail) plan = this.applyLimit(plan, ast.limit);
    if (extra.length > 0) {
      const visible = columns.slice(0, exprs.length);
      plan = { kind: 'project', input: plan, exprs: visible.map((_c, i) => col(i)), columns: visible };
    }
    return { plan, names };
  }

  applyLimit(plan: Plan, limit: AstNode | null | undefined): Plan {
    const values: AstNode[] = limit?.value ?? [];
    if (values.length === 0) return plan;
    const sep = String(limit?.seperator ?? '');
    const env = this.env(new Scope(null), 'LIMIT', false);
    const bound = (n: AstNode | undefined): Expr | null => {
      if (!n || (n.type === 'origin' && String(n.value).toLowerCase() === 'all')) return null;
      if (n.type === 'var' && Number(n.name) >= LIMIT_PARAM_BASE) {
        const text = this.ctx.limitExprs[Number(n.name) - LIMIT_PARAM_BASE];
        if (text === undefined) throw invalid('invalid LIMIT expression');
        return coerce(this.ctx, bindExpr(parseExpression(text), env), INT8, 'implicit');
      }
      return coerce(this.ctx, bindExpr(n, env), INT8, 'implicit');
    };
    let limitExpr: Expr | null;
    let offsetExpr: Expr | null = null;
    if (sep === ',') {
      offsetExpr = bound(values[0]);
      limitExpr = bound(values[1]);
    } else if (sep === 'offset' && values.length === 1) {
      limitExpr = null;
      offsetExpr = bound(values[0]);
    } else if (sep === 'offset' || values.length === 2) {
      limitExpr = bound(values[0]);
      offsetExpr = bound(values[1]);
    } else limitExpr = bound(values[0]);
    if (!limitExpr && !offsetExpr) return plan;
    return { kind: 'limit', input: plan, limit: limitExpr, offset: offsetExpr, columns: plan.columns };
  }

  private registerWindows(window: AstNode, scope: Scope): void {
    const defs: AstNode[] = window.expr ?? [];
    for (const def of defs) {
      const spec = def.as_window_specification?.window_specification ?? def.as_window_specification;
      scope.namedWindows.set(identName(def.name), spec);
    }
  }

  private bindSelectList(columns: readonly AstNode[], scope: Scope): { expr: Expr; name: string }[] {
    const env = this.env(scope, 'SELECT', true);
    const out: { expr: Expr; name: string }[] = [];
    for (const item of columns) {
      // A top-level cast item is the cast node itself (node-sql-parser), with `as` on it.
      const node = (item.type && item.type !== 'expr' ? item : item.expr) as AstNode;
      if (node?.type === 'column_ref' && node.column === '*') {
        out.push(...this.expandStar(node.table ? identName(node.table) : null, scope));
        continue;
      }
      const expr = bindExpr(node, env);
      const name = item.as ? (typeof item.as === 'string' ? item.as : identName(item.as)) : outputName(node);
      out.push({ expr, name });
    }
    return out;
  }

  private expandStar(table: string | null, scope: Scope): { expr: Expr; name: string }[] {
    const entries = table === null ? scope.entries : [scope.entry(table)].filter((e) => e !== undefined);
    if (table !== null && entries.length === 0) throw invalid(`missing FROM-clause entry for table "${table}"`);
    if (table === null && entries.length === 0) throw invalid('SELECT * with no tables specified is not valid');
    const out: { expr: Expr; name: string }[] = [];
    if (table === null) {
      for (const slot of scope.starOrder) {
        const c = scope.columnAt(slot);
        if (!c.hidden) out.push({ expr: scope.usingOverrides.get(slot) ?? { kind: 'column', type: c.type, index: slot, name: c.name }, name: c.name });
      }
      return out;
    }
    for (const entry of entries) {
      entry.columns.forEach((c, i) => out.push({ expr: { kind: 'column', type: c.type, index: entry.offset + i, name: c.name }, name: c.name }));
    }
    return out;
  }

  private bindGroupBy(items: readonly AstNode[], scope: Scope, selectExprs: readonly Expr[]): Expr[] {
    const env = this.env(scope, 'GROUP BY', false);
    return items.map((item) => this.positionalOrAlias(item, scope, selectExprs, 'GROUP BY') ?? bindExpr(item, env));
  }

  /** GROUP BY / ORDER BY n (a select-list position) or an output alias. */
  private positionalOrAlias(item: AstNode, scope: Scope, selectExprs: readonly Expr[], clause = 'ORDER BY'): Expr | null {
    if (item.type === 'number' && Number.isInteger(item.value)) {
      const e = selectExprs[(item.value as number) - 1];
      if (!e) throw invalid(`${clause} position ${String(item.value)} is not in select list`);
      return e;
    }
    if (item.type === 'column_ref' && item.table === null && item.column !== '*') {
      const name = identName(item.column);
      const alias = scope.aliases?.get(name);
      if (alias && !scope.lookup(null, name)) return alias;
    }
    return null;
  }

  private bindOrderBy(items: readonly AstNode[], scope: Scope, selectExprs: readonly Expr[], names: readonly string[]): SortKey[] {
    const env = this.env(scope, 'ORDER BY', true);
    return items.map((item) => {
      const [key] = bindSortKeys([{ ...item, expr: { type: 'null' } }], env);
      const node = item.expr as AstNode;
      let expr = this.positionalOrAlias(node, scope, selectExprs);
      if (!expr && node.type === 'column_ref' && node.table === null) {
        const name = identName(node.column);
        const at = names.indexOf(name);
        if (at >= 0 && names.indexOf(name, at + 1) < 0 && !scope.lookup(null, name)) expr = selectExprs[at]!;
      }
      return { ...key!, expr: expr ?? bindExpr(node, env) };
    });
  }

  private bindDistinctOn(distinct: AstNode | null | undefined, scope: Scope, selectExprs: readonly Expr[]): Expr[] | null {
    if (String(distinct?.type ?? '').toUpperCase() !== 'DISTINCT ON') return null;
    const env = this.env(scope, 'DISTINCT ON', true);
    return (distinct!.columns as AstNode[]).map((c) => this.positionalOrAlias(c.expr, scope, selectExprs) ?? bindExpr(c.expr, env));
  }
}

function nullableOf(expr: Expr, input: Plan): boolean {
  if (expr.kind === 'column') return input.columns[expr.index]?.nullable ?? true;
  if (expr.kind === 'const') return expr.value === null;
  return true;
}

export function typesOf(plan: Plan): QType[] {
  return plan.columns.map((c) => c.type);
}

export const NULL_INT8 = constant(INT8, null);
