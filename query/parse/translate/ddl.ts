/** PostgreSQL's raw CREATE TABLE / CREATE TABLE AS / CREATE INDEX / CREATE VIEW -> svcdb's DDL statements. */
import type {
  ColumnDef as RawColumnDef,
  Constraint,
  CreateStmt,
  CreateTableAsStmt,
  DefElem,
  IndexElem,
  IndexStmt,
  Node,
  RefreshMatViewStmt,
  ViewStmt,
} from '@pgsql/types';
import { scanSync } from 'libpg-query';
import type {
  ColumnConstraint,
  ColumnDef,
  CreateIndexStatement,
  CreateTableStatement,
  CreateViewStatement,
  ForeignKeyRef,
  IndexElement,
  ReferentialAction,
  RefreshMatviewStatement,
  StatementBody,
  TableConstraint,
} from '../ast/index.js';
import { relationName } from './from.js';
import { bodyOf, locOf, names, req, tagOf, unsupportedNode } from './nodes.js';
import { optExpr, translateExpr, translateQuery } from './recurse.js';
import { columnType } from './types.js';

/** CREATE [TEMP | UNLOGGED] TABLE [IF NOT EXISTS] t (columns, constraints). */
export function translateCreateTable(s: CreateStmt): CreateTableStatement {
  const rel = s.relation;
  if (rel === undefined) throw unsupportedNode('CREATE TABLE without a name', -1);
  if ((s.inhRelations ?? []).length > 0) throw unsupportedNode('INHERITS', locOf(rel));
  if (s.partspec !== undefined || s.partbound !== undefined) throw unsupportedNode('partitioned table', locOf(rel));
  if (s.ofTypename !== undefined) throw unsupportedNode('CREATE TABLE OF type', locOf(rel));
  const columns: ColumnDef[] = [];
  const constraints: TableConstraint[] = [];
  for (const elt of s.tableElts ?? []) {
    const [tag, body] = tagOf(elt);
    if (tag === 'ColumnDef') columns.push(translateColumnDef(body as RawColumnDef));
    else if (tag === 'Constraint') constraints.push(tableConstraint(body as Constraint));
    else throw unsupportedNode(tag === 'TableLikeClause' ? 'CREATE TABLE LIKE' : tag, locOf(rel));
  }
  return {
    kind: 'create_table',
    table: relationName(rel),
    ifNotExists: s.if_not_exists === true,
    columns,
    constraints,
    asQuery: null,
    asColumns: null,
    withData: true,
    temporary: rel.relpersistence === 't',
    unlogged: rel.relpersistence === 'u',
    loc: locOf(rel),
  };
}

/** CREATE TABLE t [(a, b)] AS query [WITH [NO] DATA]; CREATE MATERIALIZED VIEW likewise (`text`: the statement's text). */
export function translateCreateTableAs(s: CreateTableAsStmt, text: string): StatementBody {
  if (s.objtype === 'OBJECT_MATVIEW') return translateCreateMatview(s, text);
  const rel = s.into?.rel;
  if (rel === undefined) throw unsupportedNode('CREATE TABLE AS without a name', -1);
  const colNames = s.into?.colNames;
  return {
    kind: 'create_table',
    table: relationName(rel),
    ifNotExists: s.if_not_exists === true,
    columns: [],
    constraints: [],
    asQuery: translateQuery(req(s.query, 'CREATE TABLE AS')),
    asColumns: colNames === undefined ? null : names(colNames),
    withData: s.into?.skipData !== true,
    temporary: rel.relpersistence === 't',
    unlogged: rel.relpersistence === 'u',
    loc: locOf(rel),
  };
}

/** One column: its type (SERIAL family -> integer + serial), constraints in order, COLLATE. */
export function translateColumnDef(c: RawColumnDef): ColumnDef {
  if (c.typeName === undefined) throw unsupportedNode('column without a type', locOf(c));
  const { type, serial } = columnType(c.typeName);
  const constraints: ColumnConstraint[] = [];
  for (const n of c.constraints ?? []) {
    const k = bodyOf<Constraint>(n, 'Constraint');
    if (k === undefined) throw unsupportedNode(tagOf(n)[0], locOf(c));
    const last = constraints[constraints.length - 1];
    if (k.contype === 'CONSTR_ATTR_DEFERRABLE' && last?.kind === 'references') {
      constraints[constraints.length - 1] = { ...last, ref: { ...last.ref, deferrable: true } };
    } else if (k.contype?.startsWith('CONSTR_ATTR_') !== true) constraints.push(columnConstraint(k));
  }
  const collation = c.collClause === undefined ? null : (names(c.collClause.collname).pop() ?? null);
  return { name: c.colname ?? '', type, serial, constraints, collation, loc: locOf(c) };
}

function columnConstraint(k: Constraint): ColumnConstraint {
  const name = k.conname ?? null;
  switch (k.contype) {
    case 'CONSTR_NOTNULL':
      return { kind: 'not_null', name };
    case 'CONSTR_NULL':
      return { kind: 'null', name };
    case 'CONSTR_DEFAULT':
      return { kind: 'default', name, expr: translateExpr(req(k.raw_expr, 'DEFAULT')) };
    case 'CONSTR_PRIMARY':
      return { kind: 'primary_key', name };
    case 'CONSTR_UNIQUE':
      return { kind: 'unique', name, nullsNotDistinct: k.nulls_not_distinct === true };
    case 'CONSTR_CHECK':
      return { kind: 'check', name, expr: translateExpr(req(k.raw_expr, 'CHECK')), noInherit: k.is_no_inherit === true };
    case 'CONSTR_FOREIGN':
      return { kind: 'references', name, ref: foreignKeyRef(k) };
    case 'CONSTR_IDENTITY':
      return { kind: 'identity', name, always: k.generated_when === 'a' };
    case 'CONSTR_GENERATED':
      if (k.generated_kind === 'v') throw unsupportedNode('VIRTUAL generated column', locOf(k));
      return { kind: 'generated', name, expr: translateExpr(req(k.raw_expr, 'GENERATED')) };
    default:
      throw unsupportedNode(k.contype ?? 'Constraint', locOf(k));
  }
}

/** A table-level constraint: PRIMARY KEY (...), UNIQUE (...), CHECK (...), FOREIGN KEY (...) REFERENCES. */
export function tableConstraint(k: Constraint): TableConstraint {
  const name = k.conname ?? null;
  if (k.indexname !== undefined) throw unsupportedNode('constraint USING INDEX', locOf(k));
  switch (k.contype) {
    case 'CONSTR_PRIMARY':
      return { kind: 'primary_key', name, columns: names(k.keys) };
    case 'CONSTR_UNIQUE':
      return { kind: 'unique', name, columns: names(k.keys), nullsNotDistinct: k.nulls_not_distinct === true };
    case 'CONSTR_CHECK':
      return { kind: 'check', name, expr: translateExpr(req(k.raw_expr, 'CHECK')), noInherit: k.is_no_inherit === true };
    case 'CONSTR_FOREIGN':
      return { kind: 'foreign_key', name, columns: names(k.fk_attrs), ref: foreignKeyRef(k) };
    default:
      throw unsupportedNode(k.contype ?? 'Constraint', locOf(k));
  }
}

const ACTIONS: Readonly<Record<string, ReferentialAction>> = { a: 'no_action', r: 'restrict', c: 'cascade', n: 'set_null', d: 'set_default' };
const MATCHES = { s: 'simple', f: 'full', p: 'partial' } as const;

function foreignKeyRef(k: Constraint): ForeignKeyRef {
  if (k.pktable === undefined) throw unsupportedNode('REFERENCES without a table', locOf(k));
  if ((k.fk_del_set_cols ?? []).length > 0) throw unsupportedNode('ON DELETE SET NULL (columns)', locOf(k));
  return {
    table: relationName(k.pktable),
    columns: k.pk_attrs === undefined ? null : names(k.pk_attrs),
    onDelete: ACTIONS[k.fk_del_action ?? 'a'] ?? 'no_action',
    onUpdate: ACTIONS[k.fk_upd_action ?? 'a'] ?? 'no_action',
    match: MATCHES[(k.fk_matchtype ?? 's') as keyof typeof MATCHES] ?? 'simple',
    deferrable: k.deferrable === true,
  };
}

/** CREATE [UNIQUE] INDEX [CONCURRENTLY] [IF NOT EXISTS] [name] ON t [USING m] (elements) [INCLUDE] [WITH] [WHERE]. */
export function translateCreateIndex(s: IndexStmt): CreateIndexStatement {
  const rel = s.relation;
  if (rel === undefined) throw unsupportedNode('CREATE INDEX without a table', -1);
  if (s.nulls_not_distinct === true) throw unsupportedNode('NULLS NOT DISTINCT index', locOf(rel));
  const options: Record<string, string | number | boolean> = {};
  for (const n of s.options ?? []) {
    const d = bodyOf<DefElem>(n, 'DefElem');
    if (d?.defname !== undefined) options[d.defname] = defValue(d);
  }
  return {
    kind: 'create_index',
    name: s.idxname ?? null,
    table: relationName(rel),
    unique: s.unique === true,
    ifNotExists: s.if_not_exists === true,
    concurrently: s.concurrent === true,
    method: (s.accessMethod ?? 'btree').toLowerCase(),
    elements: (s.indexParams ?? []).map(indexElement),
    options,
    include: (s.indexIncludingParams ?? []).map((n) => bodyOf<IndexElem>(n, 'IndexElem')?.name ?? ''),
    where: optExpr(s.whereClause),
    loc: locOf(rel),
  };
}

function indexElement(n: Node): IndexElement {
  const e = bodyOf<IndexElem>(n, 'IndexElem');
  if (e === undefined) throw unsupportedNode(tagOf(n)[0], -1);
  if ((e.opclassopts ?? []).length > 0) throw unsupportedNode('operator class options', -1);
  const opclass = names(e.opclass).pop() ?? null;
  const direction = e.ordering === 'SORTBY_ASC' ? 'asc' : e.ordering === 'SORTBY_DESC' ? 'desc' : null;
  const nulls = e.nulls_ordering === 'SORTBY_NULLS_FIRST' ? 'first' : e.nulls_ordering === 'SORTBY_NULLS_LAST' ? 'last' : null;
  return { column: e.name ?? null, expr: optExpr(e.expr), opclass, direction, nulls };
}

/** A WITH (...) option's value as written: numbers as numbers, words and strings as strings, bare `opt` as true. */
export function defValue(d: DefElem): string | number | boolean {
  if (d.arg === undefined) return true;
  const [tag, body] = tagOf(d.arg);
  const b = body as { ival?: number; fval?: string; sval?: string; boolval?: boolean; names?: Node[] };
  switch (tag) {
    case 'Integer':
      return b.ival ?? 0;
    case 'Float':
      return Number(b.fval ?? '0');
    case 'Boolean':
      return b.boolval === true;
    case 'String':
      return b.sval ?? '';
    case 'TypeName':
      return names(b.names).pop() ?? '';
    default:
      throw unsupportedNode(`option value ${tag}`, locOf(d));
  }
}

/** CREATE [OR REPLACE] [TEMP] VIEW v [(cols)] AS query: `queryText` is the text after the top-level AS. */
export function translateCreateView(s: ViewStmt, text: string): StatementBody {
  const rel = s.view;
  if (rel === undefined) throw unsupportedNode('CREATE VIEW without a name', -1);
  if (s.withCheckOption !== undefined && s.withCheckOption !== 'NO_CHECK_OPTION') return { kind: 'unsupported', name: 'CREATE VIEW WITH CHECK OPTION', loc: 0 };
  const body = viewQueryText(text);
  if (body === null) return { kind: 'unsupported', name: 'CREATE RECURSIVE VIEW', loc: 0 };
  const view: CreateViewStatement = {
    kind: 'create_view',
    view: relationName(rel),
    orReplace: s.replace === true,
    columns: s.aliases === undefined ? null : names(s.aliases),
    query: translateQuery(req(s.query, 'CREATE VIEW')),
    queryText: body,
    materialized: false,
    temporary: rel.relpersistence === 't',
    ifNotExists: false,
    withData: true,
    loc: locOf(rel),
  };
  return view;
}

/** CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [(cols)] AS query [WITH [NO] DATA]: a create_view that is materialized. */
function translateCreateMatview(s: CreateTableAsStmt, text: string): StatementBody {
  const rel = s.into?.rel;
  if (rel === undefined) throw unsupportedNode('CREATE MATERIALIZED VIEW without a name', -1);
  const body = viewQueryText(text);
  if (body === null) return { kind: 'unsupported', name: 'CREATE RECURSIVE VIEW', loc: 0 };
  const colNames = s.into?.colNames;
  const view: CreateViewStatement = {
    kind: 'create_view',
    view: relationName(rel),
    orReplace: false,
    columns: colNames === undefined ? null : names(colNames),
    query: translateQuery(req(s.query, 'CREATE MATERIALIZED VIEW')),
    // The trailing WITH [NO] DATA is the statement's, not the query's.
    queryText: body.replace(/\s+WITH\s+(NO\s+)?DATA\s*$/i, ''),
    materialized: true,
    temporary: false,
    ifNotExists: s.if_not_exists === true,
    withData: s.into?.skipData !== true,
    loc: locOf(rel),
  };
  return view;
}

/** REFRESH MATERIALIZED VIEW [CONCURRENTLY] v [WITH [NO] DATA]. */
export function translateRefresh(s: RefreshMatViewStmt): RefreshMatviewStatement {
  const rel = s.relation;
  if (rel === undefined) throw unsupportedNode('REFRESH MATERIALIZED VIEW without a name', -1);
  return { kind: 'refresh_matview', view: relationName(rel), concurrently: s.concurrent === true, withData: s.skipData !== true, loc: locOf(rel) };
}

/** The text after the first AS keyword outside parentheses; null for CREATE RECURSIVE VIEW (its query is synthesized). */
function viewQueryText(text: string): string | null {
  const tokens = scanSync(text).tokens;
  let depth = 0;
  for (const [i, t] of tokens.entries()) {
    const word = t.keywordKind !== 0 ? t.text.toUpperCase() : '';
    if (word === 'RECURSIVE' && depth === 0) return null;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (word === 'AS' && depth === 0) {
      const next = tokens[i + 1];
      return next === undefined ? '' : text.slice(next.start).replace(/[\s;]+$/, '');
    }
  }
  throw unsupportedNode('CREATE VIEW without AS', -1);
}
