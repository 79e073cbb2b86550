/**
 * PostgreSQL's raw expression nodes -> svcdb's SqlExpr. One case per node kind of the raw grammar;
 * anything else is refused as INVALID_QUERY (reason 'unsupported') naming the node.
 */
import type {
  A_ArrayExpr,
  A_Const,
  A_Expr,
  A_Indirection,
  BoolExpr as RawBoolExpr,
  BooleanTest,
  CaseExpr as RawCaseExpr,
  CaseWhen,
  CoalesceExpr,
  CollateClause,
  ColumnRef as RawColumnRef,
  FuncCall as RawFuncCall,
  GroupingFunc,
  MinMaxExpr,
  Node,
  NullTest as RawNullTest,
  ParamRef as RawParamRef,
  RowExpr as RawRowExpr,
  SQLValueFunction,
  SubLink,
  TypeCast as RawTypeCast,
} from '@pgsql/types';
import type { IndirectionStep, Literal, SqlExpr } from '../ast/index.js';
import { plainCall } from '../ast/build.js';
import { translateFuncCall, translateSqlValue } from './func.js';
import { bodyOf, listItems, locOf, names, operatorName, req, tagOf, unsupportedNode } from './nodes.js';
import { exprList, optExpr, translateExpr, translateQuery } from './recurse.js';
import { intervalFieldsOf, translateTypeName } from './types.js';

type Translator = (body: never, loc: number) => SqlExpr;

const NODES: Readonly<Record<string, Translator>> = {
  A_Const: (b: A_Const, loc) => literal(b, loc),
  ColumnRef: (b: RawColumnRef, loc) => columnRef(b, loc),
  ParamRef: (b: RawParamRef, loc) => ({ kind: 'param', number: b.number ?? 0, loc }),
  A_Expr: (b: A_Expr, loc) => aExpr(b, loc),
  BoolExpr: (b: RawBoolExpr, loc) => boolExpr(b, loc),
  NullTest: (b: RawNullTest, loc) => ({ kind: 'is_null', arg: translateExpr(req(b.arg, 'NullTest')), negated: b.nulltesttype === 'IS_NOT_NULL', loc }),
  BooleanTest: (b: BooleanTest, loc) => boolTest(b, loc),
  SubLink: (b: SubLink, loc) => subLink(b, loc),
  FuncCall: (b: RawFuncCall, loc) => translateFuncCall(b, loc),
  SQLValueFunction: (b: SQLValueFunction, loc) => translateSqlValue(b, loc),
  CaseExpr: (b: RawCaseExpr, loc) => caseExpr(b, loc),
  CoalesceExpr: (b: CoalesceExpr, loc) => ({ kind: 'coalesce', args: exprList(b.args), loc }),
  MinMaxExpr: (b: MinMaxExpr, loc) => ({ kind: b.op === 'IS_LEAST' ? 'least' : 'greatest', args: exprList(b.args), loc }),
  TypeCast: (b: RawTypeCast, loc) => typeCast(b, loc),
  A_ArrayExpr: (b: A_ArrayExpr, loc) => ({ kind: 'array', elements: exprList(b.elements), loc }),
  RowExpr: (b: RawRowExpr, loc) => ({ kind: 'row', items: exprList(b.args), explicit: b.row_format === 'COERCE_EXPLICIT_CALL', loc }),
  A_Indirection: (b: A_Indirection, loc) => indirection(b, loc),
  CollateClause: (b: CollateClause, loc) => collate(b, loc),
  SetToDefault: (_b: never, loc) => ({ kind: 'default', loc }),
  GroupingFunc: (b: GroupingFunc, loc) => groupingCall(b, loc),
};

/**
 * GROUPING(a, b): the grammar's own node (GROUPING is a keyword, not a function name). It is a
 * call of `pg_catalog.grouping`, which bind/grouping-sets.ts binds against the query's grouping sets.
 */
function groupingCall(b: GroupingFunc, loc: number): SqlExpr {
  return plainCall('pg_catalog', 'grouping', exprList(b.args), loc);
}

/** svcdb's SqlExpr for one raw expression node (reached through recurse.ts's translateExpr). */
export function expressionOf(node: Node): SqlExpr {
  const [tag, body] = tagOf(node);
  const loc = locOf(body as { location?: number });
  const translate = NODES[tag];
  if (translate === undefined) throw unsupportedNode(tag, loc);
  return translate(body as never, loc);
}

function literal(c: A_Const, loc: number): Literal {
  if (c.isnull === true) return { kind: 'null', loc };
  if (c.ival !== undefined) return { kind: 'number', text: String(c.ival.ival ?? 0), loc };
  if (c.fval !== undefined) return { kind: 'number', text: c.fval.fval ?? '0', loc };
  if (c.boolval !== undefined) return { kind: 'bool', value: c.boolval.boolval ?? false, loc };
  if (c.bsval !== undefined) return { kind: 'bit_string', value: c.bsval.bsval ?? '', loc };
  return { kind: 'string', value: c.sval?.sval ?? '', loc };
}

function columnRef(c: RawColumnRef, loc: number): SqlExpr {
  const fields = c.fields ?? [];
  const parts: string[] = [];
  let star = false;
  for (const [i, f] of fields.entries()) {
    if (bodyOf(f, 'A_Star') !== undefined) {
      if (i !== fields.length - 1) throw unsupportedNode('* in the middle of a name', loc);
      star = true;
    } else parts.push(names([f])[0] ?? '');
  }
  if (star) return { kind: 'column_ref', qualifier: parts, column: null, loc };
  const column = parts.pop() ?? '';
  return { kind: 'column_ref', qualifier: parts, column, loc };
}

function aExpr(e: A_Expr, loc: number): SqlExpr {
  const op = operatorName(e.name);
  const right = (): SqlExpr => translateExpr(req(e.rexpr, 'A_Expr'));
  const left = (): SqlExpr => translateExpr(req(e.lexpr, 'A_Expr'));
  switch (e.kind) {
    case 'AEXPR_OP':
      return { kind: 'op', op, left: optExpr(e.lexpr), right: right(), loc };
    case 'AEXPR_OP_ANY':
    case 'AEXPR_OP_ALL':
      return { kind: 'quantified', op, all: e.kind === 'AEXPR_OP_ALL', arg: left(), array: right(), loc };
    case 'AEXPR_DISTINCT':
    case 'AEXPR_NOT_DISTINCT':
      return { kind: 'distinct_from', left: left(), right: right(), negated: e.kind === 'AEXPR_NOT_DISTINCT', loc };
    case 'AEXPR_NULLIF':
      return { kind: 'nullif', args: [left(), right()], loc };
    case 'AEXPR_IN':
      return { kind: 'in_list', arg: left(), list: exprList(listItems(e.rexpr)), negated: op === '<>', loc };
    case 'AEXPR_LIKE':
    case 'AEXPR_ILIKE':
    case 'AEXPR_SIMILAR':
      return like(e, op, loc);
    default:
      return between(e, loc);
  }
}

/** LIKE/ILIKE/SIMILAR TO: the grammar wraps the pattern in like_escape(p, e) / similar_to_escape(p[, e]). */
function like(e: A_Expr, op: string, loc: number): SqlExpr {
  const similar = e.kind === 'AEXPR_SIMILAR';
  const rexpr = req(e.rexpr, 'LIKE');
  const call = bodyOf<RawFuncCall>(rexpr, 'FuncCall');
  const callName = names(call?.funcname).join('.');
  let pattern: SqlExpr;
  let escape: SqlExpr | null = null;
  if (call !== undefined && callName === (similar ? 'pg_catalog.similar_to_escape' : 'pg_catalog.like_escape')) {
    const args = exprList(call.args);
    pattern = args[0] ?? translateExpr(rexpr);
    escape = args[1] ?? null;
  } else pattern = translateExpr(rexpr);
  const arg = translateExpr(req(e.lexpr, 'LIKE'));
  return { kind: 'like', arg, pattern, escape, caseInsensitive: e.kind === 'AEXPR_ILIKE', similar, negated: op.startsWith('!'), loc };
}

function between(e: A_Expr, loc: number): SqlExpr {
  const kinds = ['AEXPR_BETWEEN', 'AEXPR_NOT_BETWEEN', 'AEXPR_BETWEEN_SYM', 'AEXPR_NOT_BETWEEN_SYM'];
  if (e.kind === undefined || !kinds.includes(e.kind)) throw unsupportedNode(e.kind ?? 'A_Expr', loc);
  const [low, high] = exprList(listItems(e.rexpr));
  if (low === undefined || high === undefined) throw unsupportedNode('BETWEEN without bounds', loc);
  const negated = e.kind === 'AEXPR_NOT_BETWEEN' || e.kind === 'AEXPR_NOT_BETWEEN_SYM';
  const symmetric = e.kind === 'AEXPR_BETWEEN_SYM' || e.kind === 'AEXPR_NOT_BETWEEN_SYM';
  return { kind: 'between', arg: translateExpr(req(e.lexpr, 'BETWEEN')), low, high, negated, symmetric, loc };
}

/** AND/OR flattened (a AND (b AND c) -> and[a, b, c]); NOT kept as its own node. */
function boolExpr(b: RawBoolExpr, loc: number): SqlExpr {
  const args = exprList(b.args);
  if (b.boolop === 'NOT_EXPR') {
    const [arg] = args;
    if (arg === undefined) throw unsupportedNode('NOT without operand', loc);
    return { kind: 'not', arg, loc };
  }
  const kind = b.boolop === 'OR_EXPR' ? 'or' : 'and';
  const flat = args.flatMap((a) => (a.kind === kind ? a.args : [a]));
  return { kind, args: flat, loc };
}

function boolTest(b: BooleanTest, loc: number): SqlExpr {
  const t = b.booltesttype ?? 'IS_TRUE';
  const value = t === 'IS_TRUE' || t === 'IS_NOT_TRUE' ? true : t === 'IS_FALSE' || t === 'IS_NOT_FALSE' ? false : null;
  return { kind: 'is_bool', arg: translateExpr(req(b.arg, 'BooleanTest')), value, negated: t.startsWith('IS_NOT_'), loc };
}

/** Subqueries as expressions; `x IN (SELECT ...)` arrives as ANY without an operator name. */
function subLink(s: SubLink, loc: number): SqlExpr {
  const query = translateQuery(req(s.subselect, 'SubLink'));
  const test = optExpr(s.testexpr);
  switch (s.subLinkType) {
    case 'EXISTS_SUBLINK':
      return { kind: 'sublink', mode: 'exists', test: null, op: null, query, loc };
    case 'ANY_SUBLINK':
      if ((s.operName ?? []).length === 0) return { kind: 'sublink', mode: 'in', test, op: '=', query, loc };
      return { kind: 'sublink', mode: 'any', test, op: operatorName(s.operName), query, loc };
    case 'ALL_SUBLINK':
      return { kind: 'sublink', mode: 'all', test, op: operatorName(s.operName), query, loc };
    case 'EXPR_SUBLINK':
      return { kind: 'sublink', mode: 'scalar', test: null, op: null, query, loc };
    case 'ARRAY_SUBLINK':
      return { kind: 'sublink', mode: 'array', test: null, op: null, query, loc };
    default:
      throw unsupportedNode(s.subLinkType ?? 'SubLink', loc);
  }
}

function caseExpr(c: RawCaseExpr, loc: number): SqlExpr {
  const whens = (c.args ?? []).map((n) => {
    const w = bodyOf<CaseWhen>(n, 'CaseWhen');
    if (w === undefined) throw unsupportedNode(tagOf(n)[0], loc);
    return { when: translateExpr(req(w.expr, 'WHEN')), then: translateExpr(req(w.result, 'THEN')) };
  });
  return { kind: 'case', subject: optExpr(c.arg), whens, otherwise: optExpr(c.defresult), loc };
}

/** `x::t`, CAST(x AS t), and `t 'lit'` (literal: the type name is written before the string). */
function typeCast(c: RawTypeCast, loc: number): SqlExpr {
  const argNode = req(c.arg, 'TypeCast');
  const raw = c.typeName;
  if (raw === undefined) throw unsupportedNode('TypeCast without a type', loc);
  const constant = bodyOf<A_Const>(argNode, 'A_Const');
  const typeLoc = locOf(raw);
  const literal = constant?.sval !== undefined && typeLoc >= 0 && typeLoc < locOf(constant);
  const type = translateTypeName(raw);
  return { kind: 'cast', arg: translateExpr(argNode), type, literal, intervalFields: intervalFieldsOf(raw), loc: loc >= 0 ? loc : typeLoc };
}

function indirection(i: A_Indirection, _loc: number): SqlExpr {
  const steps = (i.indirection ?? []).map((n): IndirectionStep => {
    const [tag, body] = tagOf(n);
    if (tag === 'A_Star') return { kind: 'star' };
    if (tag === 'String') return { kind: 'field', name: String(body.sval ?? '') };
    if (tag !== 'A_Indices') throw unsupportedNode(tag, -1);
    const idx = body as { is_slice?: boolean; lidx?: Node; uidx?: Node };
    if (idx.is_slice === true) return { kind: 'slice', lower: optExpr(idx.lidx), upper: optExpr(idx.uidx) };
    return { kind: 'index', index: translateExpr(req(idx.uidx, 'subscript')) };
  });
  const arg = translateExpr(req(i.arg, 'A_Indirection'));
  // A_Indirection has no location of its own.
  return { kind: 'indirection', arg, steps, loc: arg.loc };
}

function collate(c: CollateClause, loc: number): SqlExpr {
  const parts = names(c.collname).filter((p, i, all) => !(p === 'pg_catalog' && i < all.length - 1));
  return { kind: 'collate', arg: translateExpr(req(c.arg, 'COLLATE')), collation: parts.join('.'), loc };
}
