import type { Expr } from '../plan/expr.js';
import { andAll, shiftColumns } from '../plan/expr-util.js';
import type { JoinType, OutputColumn, Plan } from '../plan/nodes.js';
import { callByName, unify } from './coerce.js';
import { invalid, type BindContext } from './context.js';
import type { RangeEntry, Scope, ScopeColumn } from './scope.js';

/**
 * JOIN ... USING (a, b) and NATURAL JOIN (`using` null: every column name both sides show):
 * equality of the columns; the right side's copies are hidden from * and unqualified names, and
 * * lists the merged columns first, then the rest of the left side, then the rest of the right,
 * as PostgreSQL does. The left side is [leftStart, rightStart) of the row. `on` is null when a
 * NATURAL JOIN has no common column; `merged` holds the merged columns' (left) row slots.
 */
export function usingCondition(
  ctx: BindContext,
  using: readonly string[] | null,
  scope: Scope,
  leftStart: number,
  rightStart: number,
  joinType: JoinType,
): { on: Expr | null; merged: number[] } {
  const names = using ?? naturalColumns(scope, leftStart, rightStart);
  const conditions: Expr[] = [];
  const merged: number[] = [];
  for (const name of names) {
    if (using && using.indexOf(name) !== using.lastIndexOf(name))
      throw invalid(`column name "${name}" appears more than once in USING clause`, { column: name });
    const left = findUsingColumn(scope, name, leftStart, rightStart, 'left');
    const right = findUsingColumn(scope, name, rightStart, Infinity, 'right');
    // Either side's merged column when it is itself the result of an earlier USING (FULL/RIGHT).
    const l: Expr = scope.usingOverrides.get(left.index) ?? { kind: 'column', type: left.column.type, index: left.index, name };
    const r: Expr = scope.usingOverrides.get(right.index) ?? { kind: 'column', type: right.column.type, index: right.index, name };
    // PostgreSQL resolves the = first (its error when there is none), then the merged column's type.
    conditions.push(callByName(ctx, '=', [l, r], true));
    const unified = unify(ctx, [l, r], 'JOIN/USING');
    const columns = [...right.entry.columns];
    columns[right.index - right.entry.offset] = { ...right.column, hidden: true };
    (right.entry as { columns: readonly ScopeColumn[] }).columns = columns;
    if (joinType === 'full') scope.usingOverrides.set(left.index, { kind: 'coalesce', type: unified.type, args: unified.exprs });
    else if (joinType === 'right') scope.usingOverrides.set(left.index, r);
    merged.push(left.index);
  }
  const before = scope.starOrder.filter((slot) => slot < leftStart);
  const rest = scope.starOrder.filter((slot) => slot >= leftStart && !merged.includes(slot));
  scope.starOrder = [...before, ...merged, ...rest];
  return { on: andAll(conditions), merged };
}

/**
 * JOIN ... USING (a, b) AS j: `j.a` is the merged column. The join's row gets the merged columns
 * appended (a project over `plan`, whose row starts at slot `start`), registered under `j` as
 * hidden columns: only qualified names and `j.*` see them.
 */
export function usingAliasColumns(scope: Scope, alias: string, merged: readonly number[], plan: Plan, start: number): Plan {
  const width = plan.columns.length;
  const own: Expr[] = plan.columns.map((c, i) => ({ kind: 'column', type: c.type, index: i, name: c.name }));
  const added: Expr[] = merged.map((slot) => {
    const c = scope.columnAt(slot);
    const e: Expr = scope.usingOverrides.get(slot) ?? { kind: 'column', type: c.type, index: slot, name: c.name };
    return shiftColumns(e, -start);
  });
  const addedColumns: OutputColumn[] = merged.map((slot, i) => ({ name: scope.columnAt(slot).name, type: added[i]!.type, nullable: true }));
  assertWidth(scope, start + width);
  scope.add(
    alias,
    addedColumns.map((c) => ({ ...c, hidden: true })),
  );
  return { kind: 'project', input: plan, exprs: [...own, ...added], columns: [...plan.columns, ...addedColumns] };
}

function assertWidth(scope: Scope, width: number): void {
  if (scope.width !== width) throw invalid('JOIN ... USING ... AS alias: unexpected row layout');
}

/** The visible column names of the left side that the right side shows too, in the left's * order. */
function naturalColumns(scope: Scope, leftStart: number, rightStart: number): string[] {
  const visible = (from: number, to: number): string[] =>
    scope.starOrder
      .filter((slot) => slot >= from && slot < to)
      .map((slot) => scope.columnAt(slot))
      .filter((c) => !c.hidden)
      .map((c) => c.name);
  const right = new Set(visible(rightStart, Infinity));
  return [...new Set(visible(leftStart, rightStart).filter((name) => right.has(name)))];
}

/** The one visible column `name` among the FROM items whose row slots are in [from, to). */
function findUsingColumn(
  scope: Scope,
  name: string,
  from: number,
  to: number,
  side: 'left' | 'right',
): { entry: RangeEntry; index: number; column: ScopeColumn } {
  let found: { entry: RangeEntry; index: number; column: ScopeColumn } | null = null;
  for (const entry of scope.entries) {
    if (entry.offset < from || entry.offset >= to) continue;
    entry.columns.forEach((column, i) => {
      if (column.name !== name || column.hidden) return;
      if (found) throw invalid(`common column name "${name}" appears more than once in ${side} table`, { column: name });
      found = { entry, index: entry.offset + i, column };
    });
  }
  if (!found) throw invalid(`column "${name}" specified in USING clause does not exist in ${side} table`, { column: name });
  return found;
}
