import type { QueryExpr, SortItem, SqlExpr } from '../parse/index.js';
import type { SortKey } from '../plan/expr.js';
import { invalid } from './context.js';
import type { BoundQuery, SelectBinder } from './bound.js';

/** ASC/DESC, NULLS FIRST/LAST and USING < / > of one ORDER BY item (the expression is bound by the caller). */
export function sortDirection(item: SortItem): { descending: boolean; nullsFirst: boolean } {
  let descending = item.direction === 'desc';
  if (item.using !== null) {
    if (item.using !== '<' && item.using !== '>') throw invalid(`ORDER BY ... USING ${item.using} is not supported`, { reason: 'unsupported' });
    descending = item.using === '>';
  }
  const nullsFirst = item.nulls === 'first' ? true : item.nulls === 'last' ? false : descending;
  return { descending, nullsFirst };
}

/** An integer literal used as a select-list position (ORDER BY 2), or null; other constants are refused as PostgreSQL does. */
export function positionOf(node: SqlExpr, clause: string): number | null {
  if (node.kind === 'number') {
    if (!/^[0-9]+$/.test(node.text) || Number(node.text) > 2147483647) throw invalid(`non-integer constant in ${clause}`);
    return Number(node.text);
  }
  if (node.kind === 'string') throw invalid(`non-integer constant in ${clause}`);
  return null;
}

/** The bare name of an unqualified column reference (`ORDER BY name`), else null. */
export function bareName(node: SqlExpr): string | null {
  return node.kind === 'column_ref' && node.qualifier.length === 0 && node.column !== null ? node.column : null;
}

/**
 * ORDER BY of a set operation or a VALUES list: output column names or positions only, then
 * LIMIT/OFFSET. `what` names the query kind in PostgreSQL's message.
 */
export function applyOutputTail(binder: SelectBinder, q: BoundQuery, tail: QueryExpr, what: string): BoundQuery {
  let plan = q.plan;
  if (tail.orderBy.length > 0) {
    const keys: SortKey[] = tail.orderBy.map((item) => {
      const position = positionOf(item.expr, 'ORDER BY');
      const name = bareName(item.expr);
      let index = -1;
      if (position !== null) {
        if (position < 1 || position > plan.columns.length) throw invalid(`ORDER BY position ${position} is not in select list`);
        index = position - 1;
      } else if (name !== null) index = q.names.indexOf(name);
      const column = plan.columns[index];
      if (!column) throw invalid(`invalid ${what} ORDER BY clause: only result column names or positions can be used`);
      return { ...sortDirection(item), expr: { kind: 'column', type: column.type, index, name: column.name } };
    });
    plan = { kind: 'sort', input: plan, keys, columns: plan.columns };
  }
  if (tail.withTies) throw invalid('FETCH FIRST ... WITH TIES is not supported', { reason: 'unsupported' });
  return { plan: binder.applyLimit(plan, tail.limit, tail.offset), names: q.names };
}

const LOCK_NAMES = { update: 'FOR UPDATE', no_key_update: 'FOR NO KEY UPDATE', share: 'FOR SHARE', key_share: 'FOR KEY SHARE' } as const;

/**
 * FOR UPDATE / FOR SHARE: accepted and ignored (docs/sql.md: a transaction's reads are validated
 * at COMMIT, so a row another transaction changed fails the commit instead of blocking), after
 * PostgreSQL's own checks of where the clause may stand.
 */
export function checkLocking(q: QueryExpr, fromAliases: () => readonly string[], nullable: ReadonlySet<string> = new Set()): void {
  const lock = q.locking[0];
  if (!lock) return;
  const name = LOCK_NAMES[lock.strength];
  if (q.kind === 'set_op') throw invalid(`${name} is not allowed with UNION/INTERSECT/EXCEPT`);
  if (q.kind === 'values') throw invalid(`${name} cannot be applied to VALUES`);
  if (q.distinct !== null) throw invalid(`${name} is not allowed with DISTINCT clause`);
  if (q.groupBy.length > 0) throw invalid(`${name} is not allowed with GROUP BY clause`);
  if (q.having !== null) throw invalid(`${name} is not allowed with HAVING clause`);
  const known = fromAliases();
  for (const l of q.locking) {
    for (const of of l.of) {
      if (!known.includes(of)) throw invalid(`relation "${of}" in ${LOCK_NAMES[l.strength]} clause not found in FROM clause`, { table: of });
    }
    if ((l.of.length === 0 ? known : l.of).some((alias) => nullable.has(alias))) {
      throw invalid(`${LOCK_NAMES[l.strength]} cannot be applied to the nullable side of an outer join`);
    }
  }
}

/** The locking clause's name for messages ("FOR UPDATE"), or null without one. */
export function lockingName(q: QueryExpr): string | null {
  const lock = q.locking[0];
  return lock ? LOCK_NAMES[lock.strength] : null;
}
