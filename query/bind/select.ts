import type { QueryExpr, SelectQuery, SelectTarget, SqlExpr, WindowSpec } from '../parse/index.js';
import { INT8, type Expr, type SortKey } from '../plan/expr.js';
import { exprKey, someExpr } from '../plan/expr-util.js';
import type { OutputColumn, Plan } from '../plan/nodes.js';
import { aggregateNode, collectAggregates, collectWindows, rewriteOverAggregate, rewriteOverWindow, windowNode } from './aggregate.js';
import { asCondition, coerce, resolveUnknown } from './coerce.js';
import { invalid, type BindContext } from './context.js';
import { bindCtes } from './ctes.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { bindFrom, bindValuesRows, type FromDeps } from './from.js';
import { bindFunction } from './functions.js';
import { outputName } from './names.js';
import { Scope } from './scope.js';
import { resolveWindow } from './window-frame.js';
import { collectGroupingCalls, constantKeyItems, expandGroupingSets, hasGroupingCall, hasGroupingSets } from './grouping-sets.js';
import { bindSetOperation } from './set-ops.js';
import { crossSelectListSeries, moveColumns, placeSeries, selectListSeries, SERIES_SLOT } from './select-list-srf.js';
import { applyOutputTail, bareName, checkLocking, lockingName, positionOf, sortDirection } from './tail.js';
import type { BoundQuery, SelectBinder } from './bound.js';

export type { BoundQuery } from './bound.js';

/** Binds SELECT / VALUES / set operations with CTEs, ORDER BY and LIMIT. */
export class QueryBinder implements SelectBinder {
  readonly deps: FromDeps;

  constructor(readonly ctx: BindContext) {
    this.deps = {
      ctx,
      bindQuery: (query, scope) => this.bindQuery(query, scope),
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
      bindSubquery: (query, child) => {
        this.ctx.sublinkDepth += 1;
        try {
          const q = this.bindQuery(query, child);
          return { plan: q.plan, types: q.plan.columns.map((c) => c.type) };
        } finally {
          this.ctx.sublinkDepth -= 1;
        }
      },
      bindFunction,
    };
  }

  /** Any query: its WITH first, then the body with its own ORDER BY / LIMIT. */
  bindQuery(query: QueryExpr, scope: Scope, operand = false): BoundQuery {
    if (query.with) bindCtes(this, query.with, scope);
    if (query.kind === 'select') return this.bindSelect(query, scope, operand);
    checkLocking(query, () => []);
    if (query.kind === 'set_op') return bindSetOperation(query, scope, this);
    const values = bindValuesRows(query.rows, scope, this.deps);
    return applyOutputTail(this, values, query, 'VALUES');
  }

  /** One SELECT with its ORDER BY / LIMIT (`operand`: see SelectBinder.bindQuery). */
  bindSelect(q: SelectQuery, scope: Scope, operand = false): BoundQuery {
    const worktableRefs = this.ctx.worktableRefs.length;
    let plan: Plan = q.from.length > 0 ? bindFrom(q.from, scope, this.deps) : { kind: 'one_row', columns: [] };
    checkLocking(q, () => scope.entries.map((e) => e.alias), scope.nullableAliases);
    this.registerWindows(q.windows, scope);
    if (q.where) {
      const predicate = asCondition(this.ctx, bindExpr(q.where, this.env(scope, 'WHERE', false)), 'WHERE');
      plan = { kind: 'filter', input: plan, predicate, columns: plan.columns };
    }
    const fromWidth = plan.columns.length;
    const series = selectListSeries(q.targets, scope, this.env(scope, 'SELECT', true));
    const items = this.bindSelectList(series?.targets ?? q.targets, scope);
    let exprs = items.map((i) => i.expr);
    const names = items.map((i) => i.name);
    const grouping = this.bindGroupBy(q, scope, exprs, names);
    const having = q.having ? asCondition(this.ctx, bindExpr(q.having, this.env(scope, 'HAVING', true)), 'HAVING') : null;
    const order = this.bindOrderBy(q, scope, exprs, names);
    const distinctOn = q.distinct && q.distinct.length > 0 ? q.distinct.map((e) => this.outputOrInput(e, scope, exprs, names, 'DISTINCT ON')) : null;
    let orderExprs = order.map((o) => o.expr);
    let havingExpr = having;
    let onExprs = distinctOn;

    let functions = series?.functions ?? [];
    const aggs = collectAggregates([...exprs, ...(having ? [having] : []), ...orderExprs, ...(distinctOn ?? []), ...functions.flatMap((f) => f.args)]);
    // Where the select list's set-returning functions run (select-list-srf.ts): 'before' grouping
    // (and windows) when they are grouping keys or nothing is grouped or windowed, else 'after'.
    const seriesAt = series
      ? placeSeries(functions, fromWidth, grouping.keys, aggs.length > 0 || grouping.grouped, collectWindows([...exprs, ...orderExprs]).calls.length > 0)
      : null;
    if (seriesAt === 'before') plan = crossSelectListSeries(plan, functions);
    if (seriesAt === 'after') {
      // Parked at SERIES_SLOT + j while the grouping and window rewrites move the other columns.
      const park = (e: Expr): Expr => moveColumns(e, fromWidth, functions.length, SERIES_SLOT);
      exprs = exprs.map(park);
      orderExprs = orderExprs.map(park);
      onExprs = onExprs?.map(park) ?? null;
    }
    if (aggs.length > 0 && this.ctx.worktableRefs.length > worktableRefs)
      throw invalid("aggregate functions are not allowed in a recursive query's recursive term");
    const lock = lockingName(q);
    if (lock && aggs.length > 0) throw invalid(`${lock} is not allowed with aggregate functions`);
    if (aggs.length > 0 || grouping.grouped) {
      const groupBy = grouping.keys;
      const keys = groupBy.map(exprKey);
      const groupNames = groupBy.map((g) => (g.kind === 'column' ? g.name : '?column?'));
      const groupingCalls = collectGroupingCalls([...exprs, ...(having ? [having] : []), ...orderExprs, ...(distinctOn ?? [])], keys);
      const rewrite = (e: Expr): Expr => rewriteOverAggregate(e, keys, aggs, (i) => groupNames[i]!, groupingCalls.keys, SERIES_SLOT);
      plan = aggregateNode(plan, groupBy, aggs, groupNames, grouping.sets, groupingCalls.args);
      if (seriesAt === 'after') functions = functions.map((f) => ({ ...f, args: f.args.map(rewrite) }));
      // A select item that is a constant key (grouping-sets.ts constantKeyItems) becomes the key's
      // column, and so does an ORDER BY / DISTINCT ON item naming that select item.
      const keyColumn = new Map([...grouping.constantItems].map(([at, g]) => [items[at]!.expr, g]));
      const rewriteItem = (original: Expr, e: Expr): Expr => {
        const g = keyColumn.get(original);
        return g === undefined ? rewrite(e) : { kind: 'column', type: groupBy[g]!.type, index: g, name: groupNames[g]! };
      };
      exprs = exprs.map((e, i) => rewriteItem(items[i]!.expr, e));
      orderExprs = orderExprs.map((e, i) => rewriteItem(order[i]!.expr, e));
      havingExpr = havingExpr ? rewrite(havingExpr) : null;
      onExprs = onExprs?.map((e, i) => rewriteItem(distinctOn![i]!, e)) ?? null;
      if (havingExpr) plan = { kind: 'filter', input: plan, predicate: havingExpr, columns: plan.columns };
    } else if (hasGroupingCall([...exprs, ...(having ? [having] : []), ...orderExprs, ...(distinctOn ?? [])])) {
      throw invalid('arguments to GROUPING must be grouping expressions of the associated query level');
    } else if (having) {
      plan = { kind: 'filter', input: plan, predicate: having, columns: plan.columns };
    }

    const windows = collectWindows([...exprs, ...orderExprs]);
    if (windows.calls.length > 0) {
      if (lock) throw invalid(`${lock} is not allowed with window functions`);
      const width = plan.columns.length;
      plan = windowNode(plan, windows.calls, windows.nodes);
      exprs = exprs.map((e) => rewriteOverWindow(e, windows.keys, width));
      orderExprs = orderExprs.map((e) => rewriteOverWindow(e, windows.keys, width));
    }
    if (lock && series) throw invalid(`${lock} is not allowed with set-returning functions in the target list`);
    if (seriesAt === 'after') {
      // PostgreSQL's ProjectSet above the Aggregate and WindowAgg: the functions run once per grouped row.
      const width = plan.columns.length;
      plan = crossSelectListSeries(plan, functions);
      const place = (e: Expr): Expr => moveColumns(e, SERIES_SLOT, functions.length, width);
      exprs = exprs.map(place);
      orderExprs = orderExprs.map(place);
      onExprs = onExprs?.map(place) ?? null;
    }
    if (!operand) exprs = exprs.map((e) => resolveUnknown(this.ctx, e));
    const sortKeys: SortKey[] = order.map((o, i) => ({ ...o, expr: orderExprs[i]! }));
    return this.finishSelect(plan, { exprs, names, order: sortKeys, distinctOn: onExprs }, q);
  }

  private finishSelect(input: Plan, out: { exprs: Expr[]; names: string[]; order: SortKey[]; distinctOn: Expr[] | null }, q: SelectQuery): BoundQuery {
    const { exprs, names, order, distinctOn } = out;
    const distinct = q.distinct !== null && q.distinct.length === 0;
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
    if (q.withTies) throw invalid('FETCH FIRST ... WITH TIES is not supported', { reason: 'unsupported' });
    plan = this.applyLimit(plan, q.limit, q.offset);
    if (extra.length > 0) {
      const visible = columns.slice(0, exprs.length);
      plan = { kind: 'project', input: plan, exprs: visible.map((_c, i) => col(i)), columns: visible };
    }
    return { plan, names };
  }

  /** LIMIT / OFFSET: any expression without columns of the query (parameters and subqueries included), as bigint. */
  applyLimit(plan: Plan, limit: SqlExpr | null, offset: SqlExpr | null): Plan {
    const bound = (node: SqlExpr | null, clause: string): Expr | null => {
      if (node === null) return null;
      const env = this.env(new Scope(null), clause, false);
      return coerce(this.ctx, bindExpr(node, env), INT8, 'implicit');
    };
    const limitExpr = bound(limit, 'LIMIT');
    const offsetExpr = bound(offset, 'OFFSET');
    if (!limitExpr && !offsetExpr) return plan;
    return { kind: 'limit', input: plan, limit: limitExpr, offset: offsetExpr, columns: plan.columns };
  }

  /** WINDOW w AS (...), each definition's own reference (WINDOW b AS (a ...)) resolved against the earlier ones. */
  private registerWindows(windows: readonly WindowSpec[], scope: Scope): void {
    for (const def of windows) {
      const name = def.name!;
      if (scope.namedWindows.has(name)) throw invalid(`window "${name}" is already defined`, { window: name });
      scope.namedWindows.set(name, resolveWindow(def, scope.namedWindows));
    }
  }

  private bindSelectList(targets: readonly SelectTarget[], scope: Scope): { expr: Expr; name: string }[] {
    const env = this.env(scope, 'SELECT', true);
    const out: { expr: Expr; name: string }[] = [];
    for (const item of targets) {
      const node = item.expr;
      if (node.kind === 'column_ref' && node.column === null) {
        out.push(...this.expandStar(node.qualifier.length > 0 ? node.qualifier[node.qualifier.length - 1]! : null, scope));
        continue;
      }
      out.push({ expr: bindExpr(node, env), name: item.alias ?? outputName(node) });
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

  /**
   * GROUP BY items: a position, an input column, else an output name (PostgreSQL's order for
   * GROUP BY), else an expression. `GROUP BY ()` groups all rows into one; ROLLUP, CUBE and
   * GROUPING SETS are expanded into sets of those keys (grouping-sets.ts).
   */
  private bindGroupBy(
    q: SelectQuery,
    scope: Scope,
    selectExprs: readonly Expr[],
    names: readonly string[],
  ): { keys: Expr[]; sets: number[][] | null; grouped: boolean; constantItems: Map<number, number> } {
    const env = this.env(scope, 'GROUP BY', false);
    // The select item each key names by position or output name, by the key's structure (first wins).
    const itemOfKey = new Map<string, number>();
    const bindKey = (node: SqlExpr): Expr => {
      const position = positionOf(node, 'GROUP BY');
      const name = position === null ? bareName(node) : null;
      const at = position !== null ? position - 1 : name === null || scope.lookup(null, name) ? -1 : names.indexOf(name);
      if (position !== null && !selectExprs[at]) throw invalid(`GROUP BY position ${position} is not in select list`);
      if (at < 0) return bindExpr(node, env);
      const e = selectExprs[at]!;
      if (!itemOfKey.has(exprKey(e))) itemOfKey.set(exprKey(e), at);
      return e;
    };
    const items = q.groupBy;
    let keys: Expr[] = [];
    let sets: number[][] | null = null;
    if (hasGroupingSets(items)) ({ keys, sets } = expandGroupingSets(items, q.groupByDistinct, bindKey));
    else for (const item of items) if (item.kind === 'expr') keys.push(bindKey(item.expr));
    // A position or output name may point at an aggregate or window call, which cannot be a key.
    if (keys.some((k) => someExpr(k, (e) => e.kind === 'agg'))) throw invalid('aggregate functions are not allowed in GROUP BY');
    if (keys.some((k) => someExpr(k, (e) => e.kind === 'window'))) throw invalid('window functions are not allowed in GROUP BY');
    return { keys, sets, grouped: items.length > 0, constantItems: sets === null ? new Map() : constantKeyItems(keys, selectExprs, itemOfKey) };
  }

  private bindOrderBy(q: SelectQuery, scope: Scope, selectExprs: readonly Expr[], names: readonly string[]): SortKey[] {
    return q.orderBy.map((item) => ({ ...sortDirection(item), expr: this.outputOrInput(item.expr, scope, selectExprs, names, 'ORDER BY') }));
  }

  /**
   * An ORDER BY / DISTINCT ON item as PostgreSQL reads it (SQL92 rules first): a position, a bare
   * output column name (ambiguous if it names two different outputs), else an expression over
   * the input columns.
   */
  private outputOrInput(node: SqlExpr, scope: Scope, selectExprs: readonly Expr[], names: readonly string[], clause: string): Expr {
    const position = positionOf(node, clause);
    if (position !== null) {
      const e = selectExprs[position - 1];
      if (!e || position < 1) throw invalid(`${clause} position ${position} is not in select list`);
      return e;
    }
    const name = bareName(node);
    if (name !== null) {
      const matches = names.flatMap((n, i) => (n === name ? [selectExprs[i]!] : []));
      if (matches.length > 0) {
        if (matches.some((m) => exprKey(m) !== exprKey(matches[0]!))) throw invalid(`${clause} "${name}" is ambiguous`, { column: name });
        return matches[0]!;
      }
    }
    return bindExpr(node, this.env(scope, clause, true));
  }
}

function nullableOf(expr: Expr, input: Plan): boolean {
  if (expr.kind === 'column') return input.columns[expr.index]?.nullable ?? true;
  if (expr.kind === 'const') return expr.value === null;
  return true;
}
