/** PostgreSQL's raw FROM items -> svcdb's FromItem: tables, subqueries, functions (ROWS FROM, WITH ORDINALITY), joins. */
import type { Alias as RawAlias, ColumnDef, FuncCall, JoinExpr as RawJoin, Node, RangeFunction, RangeSubselect, RangeVar } from '@pgsql/types';
import type { Alias, FromItem, FunctionRef, JoinExpr, QualifiedName, SqlExpr, TableRef } from '../ast/index.js';
import { bodyOf, listItems, locOf, names, req, tagOf, unsupportedNode } from './nodes.js';
import { optExpr, translateExpr, translateQuery } from './recurse.js';
import { translateTypeName } from './types.js';

/** One FROM item. */
export function translateFrom(node: Node): FromItem {
  const [tag, body] = tagOf(node);
  switch (tag) {
    case 'RangeVar':
      return tableRef(body as RangeVar);
    case 'RangeSubselect': {
      const r = body as RangeSubselect;
      return { kind: 'subquery', query: translateQuery(req(r.subquery, 'subquery')), alias: aliasOf(r.alias), lateral: r.lateral === true, loc: -1 };
    }
    case 'RangeFunction':
      return functionRef(body as RangeFunction);
    case 'JoinExpr':
      return joinExpr(body as RawJoin);
    default:
      throw unsupportedNode(tag, locOf(body as { location?: number }));
  }
}

/** `schema.name` of a RangeVar (a catalog part is refused: one database). */
export function relationName(r: RangeVar): QualifiedName {
  if (r.catalogname !== undefined) throw unsupportedNode('cross-database reference', locOf(r));
  return { schema: r.schemaname ?? null, name: r.relname ?? '' };
}

/** `AS a (c1, c2)`; null when absent. */
export function aliasOf(a: RawAlias | undefined): Alias | null {
  if (a === undefined) return null;
  return { name: a.aliasname ?? '', columns: a.colnames === undefined ? null : names(a.colnames) };
}

function tableRef(r: RangeVar): TableRef {
  return { kind: 'table', name: relationName(r), alias: aliasOf(r.alias), only: r.inh !== true, loc: locOf(r) };
}

/** `f(...) [WITH ORDINALITY] [AS a(...)]`, `ROWS FROM (f(...), g(...))`: each function is a List [call, coldeflist]. */
function functionRef(r: RangeFunction): FunctionRef {
  const calls: SqlExpr[] = [];
  let columnDefs = coldefs(r.coldeflist);
  for (const item of r.functions ?? []) {
    const [call, defs] = listItems(item);
    if (call === undefined) throw unsupportedNode('RangeFunction without a call', -1);
    calls.push(translateExpr(call));
    // ROWS FROM (f() AS (a int)): a per-function column list; kept when it is the only one.
    if (defs !== undefined && Object.keys(defs).length > 0) columnDefs = [...(columnDefs ?? []), ...coldefs(listItems(defs))!];
  }
  const first = bodyOf<FuncCall>(r.functions?.[0] !== undefined ? listItems(r.functions[0])[0] : undefined, 'FuncCall');
  return {
    kind: 'function',
    calls,
    alias: aliasOf(r.alias),
    lateral: r.lateral === true,
    withOrdinality: r.ordinality === true,
    columnDefs,
    loc: locOf(first),
  };
}

function coldefs(list: readonly Node[] | undefined): FunctionRef['columnDefs'] {
  if (list === undefined) return null;
  return list.map((n) => {
    const c = bodyOf<ColumnDef>(n, 'ColumnDef');
    if (c?.typeName === undefined) throw unsupportedNode(tagOf(n)[0], -1);
    return { name: c.colname ?? '', type: translateTypeName(c.typeName) };
  });
}

const JOIN_TYPES = { JOIN_INNER: 'inner', JOIN_LEFT: 'left', JOIN_RIGHT: 'right', JOIN_FULL: 'full' } as const;

/** A join; CROSS JOIN is an inner join without a condition. */
function joinExpr(j: RawJoin): JoinExpr {
  const base = JOIN_TYPES[j.jointype as keyof typeof JOIN_TYPES];
  if (base === undefined) throw unsupportedNode(j.jointype ?? 'JoinExpr', -1);
  const using = j.usingClause === undefined ? null : names(j.usingClause);
  const on = optExpr(j.quals);
  const cross = base === 'inner' && on === null && using === null && j.isNatural !== true;
  const left = translateFrom(req(j.larg, 'JOIN'));
  return {
    kind: 'join',
    type: cross ? 'cross' : base,
    left,
    right: translateFrom(req(j.rarg, 'JOIN')),
    natural: j.isNatural === true,
    using,
    usingAlias: j.join_using_alias?.aliasname ?? null,
    on,
    alias: aliasOf(j.alias),
    loc: left.loc,
  };
}
