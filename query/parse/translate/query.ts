/** PostgreSQL's raw SelectStmt -> svcdb's QueryExpr: SELECT, VALUES, set operations, WITH, ORDER BY, LIMIT, FOR UPDATE. */
import type { CommonTableExpr as RawCte, GroupingSet, LockingClause, Node, ResTarget, SelectStmt, WindowDef, WithClause as RawWith } from '@pgsql/types';
import type { CommonTableExpr, GroupingItem, QueryExpr, QueryTail, SelectTarget, SqlExpr, WithClause } from '../ast/index.js';
import { translateFrom } from './from.js';
import { sortItems, windowSpec } from './func.js';
import { bodyOf, listItems, locOf, names, tagOf, unsupportedNode } from './nodes.js';
import { exprList, optExpr, translateDml, translateExpr, translateQuery } from './recurse.js';

/** A raw query node (`{ SelectStmt }`) -> QueryExpr (reached through recurse.ts's translateQuery). */
export function queryOf(node: Node): QueryExpr {
  const s = bodyOf<SelectStmt>(node, 'SelectStmt');
  if (s === undefined) throw unsupportedNode(tagOf(node)[0], -1);
  return selectStmt(s);
}

/** A SelectStmt body -> QueryExpr (set operations' operands arrive unwrapped). */
export function selectStmt(s: SelectStmt): QueryExpr {
  if (s.intoClause !== undefined) throw unsupportedNode('SELECT_INTO', -1);
  const tail = queryTail(s);
  if (s.op !== undefined && s.op !== 'SETOP_NONE') {
    if (s.larg === undefined || s.rarg === undefined) throw unsupportedNode('set operation without operands', -1);
    const op = s.op === 'SETOP_UNION' ? 'union' : s.op === 'SETOP_INTERSECT' ? 'intersect' : 'except';
    return { kind: 'set_op', op, all: s.all === true, left: selectStmt(s.larg), right: selectStmt(s.rarg), ...tail };
  }
  if (s.valuesLists !== undefined) return { kind: 'values', rows: s.valuesLists.map((row) => exprList(listItems(row))), ...tail };
  return {
    kind: 'select',
    distinct: distinctOf(s.distinctClause),
    targets: selectTargets(s.targetList),
    from: (s.fromClause ?? []).map(translateFrom),
    where: optExpr(s.whereClause),
    groupBy: (s.groupClause ?? []).map(groupingItem),
    groupByDistinct: s.groupDistinct === true,
    having: optExpr(s.havingClause),
    windows: (s.windowClause ?? []).map((n) => windowSpec(bodyOf<WindowDef>(n, 'WindowDef') ?? {}, false)),
    ...tail,
  };
}

/** `DISTINCT` arrives as a list of one empty item; DISTINCT ON as its expressions. */
function distinctOf(list: readonly Node[] | undefined): SqlExpr[] | null {
  if (list === undefined) return null;
  const items = list.filter((n) => Object.keys(n).length > 0);
  return items.map(translateExpr);
}

/** Select-list / RETURNING items: expression with its alias. */
export function selectTargets(list: readonly Node[] | undefined): SelectTarget[] {
  return (list ?? []).map((n) => {
    const t = bodyOf<ResTarget>(n, 'ResTarget');
    if (t?.val === undefined) throw unsupportedNode(tagOf(n)[0], -1);
    return { expr: translateExpr(t.val), alias: t.name ?? null, loc: locOf(t) };
  });
}

function groupingItem(n: Node): GroupingItem {
  const g = bodyOf<GroupingSet>(n, 'GroupingSet');
  if (g === undefined) return { kind: 'expr', expr: translateExpr(n) };
  switch (g.kind) {
    case 'GROUPING_SET_EMPTY':
      return { kind: 'empty' };
    case 'GROUPING_SET_ROLLUP':
      return { kind: 'rollup', items: exprList(g.content) };
    case 'GROUPING_SET_CUBE':
      return { kind: 'cube', items: exprList(g.content) };
    case 'GROUPING_SET_SETS':
      return { kind: 'sets', sets: (g.content ?? []).map(groupingItem) };
    default:
      throw unsupportedNode(g.kind ?? 'GroupingSet', locOf(g));
  }
}

/** LIMIT ALL (and LIMIT NULL) arrive as a null constant: no limit. */
function limitOf(node: Node | undefined): SqlExpr | null {
  const e = optExpr(node);
  return e?.kind === 'null' ? null : e;
}

function queryTail(s: SelectStmt): QueryTail {
  return {
    with: translateWith(s.withClause),
    orderBy: sortItems(s.sortClause),
    limit: limitOf(s.limitCount),
    offset: optExpr(s.limitOffset),
    withTies: s.limitOption === 'LIMIT_OPTION_WITH_TIES',
    locking: (s.lockingClause ?? []).map(lockingItem),
    loc: -1,
  };
}

const STRENGTHS = { LCS_FORUPDATE: 'update', LCS_FORNOKEYUPDATE: 'no_key_update', LCS_FORSHARE: 'share', LCS_FORKEYSHARE: 'key_share' } as const;

function lockingItem(n: Node): QueryTail['locking'][number] {
  const l = bodyOf<LockingClause>(n, 'LockingClause') ?? {};
  const strength = STRENGTHS[l.strength as keyof typeof STRENGTHS] ?? 'update';
  const of = (l.lockedRels ?? []).map((r) => bodyOf<{ relname?: string }>(r, 'RangeVar')?.relname ?? '');
  return { strength, of };
}

/** WITH [RECURSIVE]: each CTE's body is a query or a data-modifying statement. */
export function translateWith(w: RawWith | undefined): WithClause | null {
  if (w === undefined) return null;
  const ctes = (w.ctes ?? []).map((n): CommonTableExpr => {
    const c = bodyOf<RawCte>(n, 'CommonTableExpr');
    if (c?.ctequery === undefined) throw unsupportedNode(tagOf(n)[0], -1);
    if (c.search_clause !== undefined) throw unsupportedNode('SEARCH clause', locOf(c));
    if (c.cycle_clause !== undefined) throw unsupportedNode('CYCLE clause', locOf(c));
    const materialized = c.ctematerialized === 'CTEMaterializeAlways' ? true : c.ctematerialized === 'CTEMaterializeNever' ? false : null;
    const isQuery = bodyOf(c.ctequery, 'SelectStmt') !== undefined;
    const query = isQuery ? translateQuery(c.ctequery) : translateDml(c.ctequery);
    const columns = c.aliascolnames === undefined ? null : names(c.aliascolnames);
    return { name: c.ctename ?? '', columns, materialized, query, loc: locOf(c) };
  });
  return { recursive: w.recursive === true, ctes };
}
