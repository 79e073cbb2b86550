/** PostgreSQL's raw INSERT / UPDATE / DELETE -> svcdb's DmlStatement (target aliases, ON CONFLICT, RETURNING, WITH). */
import type { DeleteStmt, IndexElem, InsertStmt, MultiAssignRef, Node, OnConflictClause, RangeVar, ResTarget, ReturningClause, UpdateStmt } from '@pgsql/types';
import { SvcError } from '../../../core/errors.js';
import type { DeleteStatement, DmlStatement, InsertStatement, OnConflict, SelectTarget, SetClause, SqlExpr, UpdateStatement } from '../ast/index.js';
import { relationName, translateFrom } from './from.js';
import { bodyOf, locOf, req, tagOf, unsupportedNode } from './nodes.js';
import { selectTargets, translateWith } from './query.js';
import { optExpr, translateExpr, translateQuery } from './recurse.js';

/** A raw INSERT/UPDATE/DELETE node -> DmlStatement (MERGE and the rest are refused); reached through recurse.ts's translateDml. */
export function dmlOf(node: Node): DmlStatement {
  const [tag, body] = tagOf(node);
  if (tag === 'InsertStmt') return translateInsert(body as InsertStmt);
  if (tag === 'UpdateStmt') return translateUpdate(body as UpdateStmt);
  if (tag === 'DeleteStmt') return translateDelete(body as DeleteStmt);
  throw unsupportedNode(tag, -1);
}

function target(r: RangeVar | undefined): RangeVar {
  if (r === undefined) throw unsupportedNode('statement without a target table', -1);
  return r;
}

function returningOf(r: ReturningClause | undefined): SelectTarget[] | null {
  if (r === undefined) return null;
  if ((r.options ?? []).length > 0) throw unsupportedNode('RETURNING WITH (OLD/NEW AS ...)', -1);
  return selectTargets(r.exprs);
}

/** INSERT INTO t [AS a] [(cols)] source [ON CONFLICT ...] [RETURNING ...]; a missing source is DEFAULT VALUES. */
export function translateInsert(s: InsertStmt): InsertStatement {
  const rel = target(s.relation);
  const columns =
    s.cols === undefined
      ? null
      : s.cols.map((n) => {
          const t = bodyOf<ResTarget>(n, 'ResTarget');
          if (t === undefined || (t.indirection ?? []).length > 0) throw unsupportedNode('INSERT column with subscript or field', locOf(t));
          return t.name ?? '';
        });
  const overriding = s.override === 'OVERRIDING_SYSTEM_VALUE' ? 'system' : s.override === 'OVERRIDING_USER_VALUE' ? 'user' : null;
  return {
    kind: 'insert',
    with: translateWith(s.withClause),
    table: relationName(rel),
    alias: rel.alias?.aliasname ?? null,
    columns,
    source: s.selectStmt === undefined ? null : translateQuery(s.selectStmt),
    overriding,
    onConflict: s.onConflictClause === undefined ? null : onConflict(s.onConflictClause),
    returning: returningOf(s.returningClause),
    loc: locOf(rel),
  };
}

function onConflict(c: OnConflictClause): OnConflict {
  const infer = c.infer;
  const columns =
    infer?.indexElems === undefined
      ? null
      : infer.indexElems.map((n) => {
          const e = bodyOf<IndexElem>(n, 'IndexElem');
          if (e?.name === undefined) throw unsupportedNode('ON CONFLICT on an expression', locOf(infer));
          return e.name;
        });
  return {
    columns,
    inferenceWhere: optExpr(infer?.whereClause),
    constraint: infer?.conname ?? null,
    action: c.action === 'ONCONFLICT_UPDATE' ? 'update' : 'nothing',
    set: setClauses(c.targetList),
    where: optExpr(c.whereClause),
  };
}

/**
 * SET items. `(a, b) = (x, y)` / `= ROW(x, y)` become one clause per column; `(a, b) = (SELECT ...)`
 * keeps `multi` (one shared source, `value` is that source too).
 */
export function setClauses(list: readonly Node[] | undefined): SetClause[] {
  let source: SqlExpr | null = null;
  return (list ?? []).map((n) => {
    const t = bodyOf<ResTarget>(n, 'ResTarget');
    if (t?.val === undefined) throw unsupportedNode(tagOf(n)[0], -1);
    const loc = locOf(t);
    const column = t.name ?? '';
    const m = bodyOf<MultiAssignRef>(t.val, 'MultiAssignRef');
    if ((t.indirection ?? []).length > 0) {
      if (m !== undefined) throw unsupportedNode('SET of a subscript or field', loc);
      return { column, value: translateExpr(t.val), multi: null, subscript: setSubscript(t.indirection!, loc), loc };
    }
    if (m === undefined) return { column, value: translateExpr(t.val), multi: null, loc };
    const index = (m.colno ?? 1) - 1;
    if (index === 0 || source === null) source = translateExpr(req(m.source, 'SET'));
    if (source.kind === 'row') {
      const value = source.items[index];
      if (value === undefined || source.items.length !== m.ncolumns)
        throw new SvcError('INVALID_QUERY', 'number of columns does not match number of values', { position: loc + 1 });
      return { column, value, multi: null, loc };
    }
    return { column, value: source, multi: { source, index, count: m.ncolumns ?? 1 }, loc };
  });
}

/** The subscript of `SET a[i] = v`: one index (a slice, a field or several subscripts are not supported). */
function setSubscript(indirection: readonly Node[], loc: number): SqlExpr {
  const [tag, body] = tagOf(indirection[0]!);
  const idx = body as { is_slice?: boolean; uidx?: Node };
  if (indirection.length !== 1 || tag !== 'A_Indices' || idx.is_slice === true) throw unsupportedNode('SET of a slice, a field or several subscripts', loc);
  return translateExpr(req(idx.uidx, 'subscript'));
}

/** UPDATE [ONLY] t [AS a] SET ... [FROM ...] [WHERE ...] [RETURNING ...]. */
export function translateUpdate(s: UpdateStmt): UpdateStatement {
  const rel = target(s.relation);
  return {
    kind: 'update',
    with: translateWith(s.withClause),
    table: relationName(rel),
    alias: rel.alias?.aliasname ?? null,
    only: rel.inh !== true,
    set: setClauses(s.targetList),
    from: (s.fromClause ?? []).map(translateFrom),
    where: whereOf(s.whereClause),
    returning: returningOf(s.returningClause),
    loc: locOf(rel),
  };
}

/** DELETE FROM [ONLY] t [AS a] [USING ...] [WHERE ...] [RETURNING ...]. */
export function translateDelete(s: DeleteStmt): DeleteStatement {
  const rel = target(s.relation);
  return {
    kind: 'delete',
    with: translateWith(s.withClause),
    table: relationName(rel),
    alias: rel.alias?.aliasname ?? null,
    only: rel.inh !== true,
    using: (s.usingClause ?? []).map(translateFrom),
    where: whereOf(s.whereClause),
    returning: returningOf(s.returningClause),
    loc: locOf(rel),
  };
}

/** WHERE CURRENT OF cursor has no meaning without cursors. */
function whereOf(node: Node | undefined): SqlExpr | null {
  if (node !== undefined && bodyOf(node, 'CurrentOfExpr') !== undefined) throw unsupportedNode('WHERE CURRENT OF', -1);
  return optExpr(node);
}
