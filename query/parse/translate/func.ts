/** Function calls (aggregates, windows, the SQL-syntax forms), SQL value functions, ORDER BY items and windows. */
import type { FuncCall as RawFuncCall, NamedArgExpr, Node, SortBy, SQLValueFunction, WindowDef } from '@pgsql/types';
import type { FrameBound, FuncCall, SortItem, SqlExpr, SqlValueFunction, WindowFrame, WindowSpec } from '../ast/index.js';
import { bodyOf, locOf, names, operatorName, req, tagOf, unsupportedNode } from './nodes.js';
import { exprList, optExpr, translateExpr } from './recurse.js';

/**
 * `f(args)`: the pg_catalog schema the grammar itself adds to SQL-syntax forms (EXTRACT, POSITION,
 * SUBSTRING, TRIM, OVERLAY, AT TIME ZONE, ...) is dropped so the binder sees plain names; a schema
 * the user wrote is kept.
 */
export function translateFuncCall(f: RawFuncCall, loc: number): FuncCall {
  const parts = names(f.funcname);
  const name = parts[parts.length - 1] ?? '';
  let schema = parts.length > 1 ? (parts[parts.length - 2] ?? null) : null;
  if (f.funcformat === 'COERCE_SQL_SYNTAX' && schema === 'pg_catalog') schema = null;
  const args: SqlExpr[] = [];
  const argNames: (string | null)[] = [];
  for (const a of f.args ?? []) {
    const named = bodyOf<NamedArgExpr>(a, 'NamedArgExpr');
    args.push(translateExpr(named === undefined ? a : req(named.arg, 'named argument')));
    argNames.push(named?.name ?? null);
  }
  const order = sortItems(f.agg_order);
  return {
    kind: 'func',
    name: { schema, name },
    args,
    argNames: argNames.some((n) => n !== null) ? argNames : null,
    star: f.agg_star === true,
    distinct: f.agg_distinct === true,
    orderBy: f.agg_within_group === true ? [] : order,
    withinGroup: f.agg_within_group === true ? order : [],
    filter: optExpr(f.agg_filter),
    over: f.over === undefined ? null : windowSpec(f.over, true),
    variadic: f.func_variadic === true,
    loc,
  };
}

const SQL_VALUE_NAMES: Readonly<Record<string, string>> = {
  SVFOP_CURRENT_DATE: 'current_date',
  SVFOP_CURRENT_TIME: 'current_time',
  SVFOP_CURRENT_TIME_N: 'current_time',
  SVFOP_CURRENT_TIMESTAMP: 'current_timestamp',
  SVFOP_CURRENT_TIMESTAMP_N: 'current_timestamp',
  SVFOP_LOCALTIME: 'localtime',
  SVFOP_LOCALTIME_N: 'localtime',
  SVFOP_LOCALTIMESTAMP: 'localtimestamp',
  SVFOP_LOCALTIMESTAMP_N: 'localtimestamp',
  SVFOP_CURRENT_ROLE: 'current_role',
  SVFOP_CURRENT_USER: 'current_user',
  SVFOP_USER: 'user',
  SVFOP_SESSION_USER: 'session_user',
  SVFOP_CURRENT_CATALOG: 'current_catalog',
  SVFOP_CURRENT_SCHEMA: 'current_schema',
};

/** CURRENT_TIMESTAMP(3) and friends; the precision is only set for the `(n)` forms. */
export function translateSqlValue(v: SQLValueFunction, loc: number): SqlValueFunction {
  const op = v.op ?? 'SVFOP_CURRENT_DATE';
  const name = SQL_VALUE_NAMES[op];
  if (name === undefined) throw unsupportedNode(op, loc);
  return { kind: 'sql_value', name, precision: op.endsWith('_N') ? (v.typmod ?? 0) : null, loc };
}

/** ORDER BY items (absent = []). */
export function sortItems(list: readonly Node[] | undefined): SortItem[] {
  return (list ?? []).map((n) => {
    const s = bodyOf<SortBy>(n, 'SortBy');
    if (s === undefined) throw unsupportedNode(tagOf(n)[0], -1);
    const direction = s.sortby_dir === 'SORTBY_ASC' ? 'asc' : s.sortby_dir === 'SORTBY_DESC' ? 'desc' : null;
    const nulls = s.sortby_nulls === 'SORTBY_NULLS_FIRST' ? 'first' : s.sortby_nulls === 'SORTBY_NULLS_LAST' ? 'last' : null;
    const using = s.sortby_dir === 'SORTBY_USING' ? operatorName(s.useOp) : null;
    return { expr: translateExpr(req(s.node, 'ORDER BY')), direction, nulls, using };
  });
}

/**
 * A window. Inline (`OVER w` / `OVER (w ...)`) the raw `name` of `OVER w` is a reference; in a
 * WINDOW clause it is the definition's own name.
 */
export function windowSpec(w: WindowDef, inline: boolean): WindowSpec {
  const ref = inline ? (w.name ?? w.refname ?? null) : (w.refname ?? null);
  return {
    name: inline ? null : (w.name ?? null),
    ref,
    partitionBy: exprList(w.partitionClause),
    orderBy: sortItems(w.orderClause),
    frame: windowFrame(w),
    loc: locOf(w),
  };
}

// PostgreSQL's FRAMEOPTION_* bits (nodes/parsenodes.h).
const F = {
  NONDEFAULT: 0x1,
  RANGE: 0x2,
  ROWS: 0x4,
  GROUPS: 0x8,
  START_UNBOUNDED_PRECEDING: 0x20,
  END_UNBOUNDED_PRECEDING: 0x40,
  START_UNBOUNDED_FOLLOWING: 0x80,
  END_UNBOUNDED_FOLLOWING: 0x100,
  START_CURRENT_ROW: 0x200,
  END_CURRENT_ROW: 0x400,
  START_OFFSET_PRECEDING: 0x800,
  END_OFFSET_PRECEDING: 0x1000,
  START_OFFSET_FOLLOWING: 0x2000,
  END_OFFSET_FOLLOWING: 0x4000,
  EXCLUDE_CURRENT_ROW: 0x8000,
  EXCLUDE_GROUP: 0x10000,
  EXCLUDE_TIES: 0x20000,
} as const;

/** The frame bitmask decoded; null when the window uses the default frame. */
function windowFrame(w: WindowDef): WindowFrame | null {
  const o = w.frameOptions ?? 0;
  if ((o & F.NONDEFAULT) === 0) return null;
  const mode = (o & F.ROWS) !== 0 ? 'rows' : (o & F.GROUPS) !== 0 ? 'groups' : 'range';
  const start = frameBound(o, 'start', w.startOffset);
  const end = frameBound(o, 'end', w.endOffset);
  const exclude = (o & F.EXCLUDE_CURRENT_ROW) !== 0 ? 'current_row' : (o & F.EXCLUDE_GROUP) !== 0 ? 'group' : (o & F.EXCLUDE_TIES) !== 0 ? 'ties' : 'no_others';
  return { mode, start, end, exclude };
}

function frameBound(o: number, side: 'start' | 'end', offset: Node | undefined): FrameBound {
  const bit = (s: string): number => F[`${side.toUpperCase()}_${s}` as keyof typeof F];
  if ((o & bit('UNBOUNDED_PRECEDING')) !== 0) return { kind: 'unbounded_preceding' };
  if ((o & bit('UNBOUNDED_FOLLOWING')) !== 0) return { kind: 'unbounded_following' };
  if ((o & bit('OFFSET_PRECEDING')) !== 0) return { kind: 'preceding', offset: translateExpr(req(offset, 'frame offset')) };
  if ((o & bit('OFFSET_FOLLOWING')) !== 0) return { kind: 'following', offset: translateExpr(req(offset, 'frame offset')) };
  return { kind: 'current_row' };
}
