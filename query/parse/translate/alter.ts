/** PostgreSQL's raw ALTER TABLE / RENAME / DROP / TRUNCATE -> svcdb's DDL statements. */
import type { AlterTableCmd, AlterTableStmt, ColumnDef as RawColumnDef, Constraint, DropStmt, Node, RangeVar, RenameStmt, TruncateStmt } from '@pgsql/types';
import type { AlterTableAction, DropStatement, QualifiedName, StatementBody, TruncateStatement } from '../ast/index.js';
import { relationName } from './from.js';
import { bodyOf, locOf, names, tagOf, unsupportedNode } from './nodes.js';
import { tableConstraint, translateColumnDef } from './ddl.js';
import { optExpr } from './recurse.js';
import { translateTypeName } from './types.js';

/** PostgreSQL's statement name for an object type (`OBJECT_MATVIEW` -> "MATERIALIZED VIEW"). */
export function objectWord(type: string | undefined): string {
  const word = (type ?? 'OBJECT_TABLE').replace(/^OBJECT_/, '');
  return word === 'MATVIEW' ? 'MATERIALIZED VIEW' : word.replace(/_/g, ' ');
}

/** ALTER TABLE [IF EXISTS] t action, ...; an action svcdb has no executor for makes the statement unsupported. */
export function translateAlterTable(s: AlterTableStmt): StatementBody {
  if (s.objtype !== undefined && s.objtype !== 'OBJECT_TABLE') return { kind: 'unsupported', name: `ALTER ${objectWord(s.objtype)}`, loc: 0 };
  const rel = relationOf(s.relation);
  const actions: AlterTableAction[] = [];
  for (const n of s.cmds ?? []) {
    const cmd = bodyOf<AlterTableCmd>(n, 'AlterTableCmd');
    const action = cmd === undefined ? null : alterAction(cmd);
    if (action === null) return { kind: 'unsupported', name: `ALTER TABLE ${words((cmd?.subtype ?? tagOf(n)[0]).replace(/^AT_/, ''))}`, loc: 0 };
    actions.push(action);
  }
  return { kind: 'alter_table', table: relationName(rel), ifExists: s.missing_ok === true, actions, loc: locOf(rel) };
}

/** "SetLogged" -> "SET LOGGED" (PostgreSQL's node names spell the command in CamelCase). */
export function words(camel: string): string {
  return camel.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase();
}

function relationOf(r: RangeVar | undefined): RangeVar {
  if (r === undefined) throw unsupportedNode('statement without a table', -1);
  return r;
}

function alterAction(c: AlterTableCmd): AlterTableAction | null {
  const column = c.name ?? '';
  switch (c.subtype) {
    case 'AT_AddColumn':
      return { kind: 'add_column', column: translateColumnDef(defOf<RawColumnDef>(c, 'ColumnDef')), ifNotExists: c.missing_ok === true };
    case 'AT_DropColumn':
      return { kind: 'drop_column', column, ifExists: c.missing_ok === true, cascade: c.behavior === 'DROP_CASCADE' };
    case 'AT_AddConstraint':
      return { kind: 'add_constraint', constraint: tableConstraint(defOf<Constraint>(c, 'Constraint')) };
    case 'AT_DropConstraint':
      return { kind: 'drop_constraint', name: column, ifExists: c.missing_ok === true };
    case 'AT_ColumnDefault':
      return { kind: 'alter_column_default', column, default: optExpr(c.def) };
    case 'AT_SetNotNull':
    case 'AT_DropNotNull':
      return { kind: 'alter_column_not_null', column, notNull: c.subtype === 'AT_SetNotNull' };
    case 'AT_AlterColumnType': {
      const def = defOf<RawColumnDef>(c, 'ColumnDef');
      if (def.typeName === undefined) throw unsupportedNode('ALTER COLUMN TYPE without a type', -1);
      return { kind: 'alter_column_type', column, type: translateTypeName(def.typeName), using: optExpr(def.raw_default) };
    }
    default:
      return null;
  }
}

function defOf<T>(c: AlterTableCmd, tag: string): T {
  const body = bodyOf<T>(c.def, tag);
  if (body === undefined) throw unsupportedNode(`${c.subtype ?? 'ALTER TABLE'} without ${tag}`, -1);
  return body;
}

/** ALTER TABLE t RENAME [COLUMN] a TO b / RENAME TO n / RENAME CONSTRAINT a TO b -> alter_table with the rename action. */
export function translateRename(s: RenameStmt): StatementBody {
  // RENAME COLUMN names the relation's kind in relationType; RENAME CONSTRAINT leaves it unset (only tables have it here).
  const on = s.renameType === 'OBJECT_COLUMN' ? s.relationType : s.renameType === 'OBJECT_TABCONSTRAINT' ? 'OBJECT_TABLE' : s.renameType;
  if (on !== 'OBJECT_TABLE' || s.relation === undefined) return { kind: 'unsupported', name: `ALTER ${objectWord(on)} RENAME`, loc: 0 };
  const from = s.subname ?? '';
  const to = s.newname ?? '';
  const action: AlterTableAction =
    s.renameType === 'OBJECT_COLUMN'
      ? { kind: 'rename_column', from, to }
      : s.renameType === 'OBJECT_TABCONSTRAINT'
        ? { kind: 'rename_constraint', from, to }
        : { kind: 'rename_table', to };
  return { kind: 'alter_table', table: relationName(s.relation), ifExists: s.missing_ok === true, actions: [action], loc: locOf(s.relation) };
}

const DROP_OBJECTS: Readonly<Record<string, DropStatement['object']>> = {
  OBJECT_TABLE: 'table',
  OBJECT_VIEW: 'view',
  OBJECT_INDEX: 'index',
  OBJECT_MATVIEW: 'materialized_view',
  OBJECT_SCHEMA: 'schema',
  OBJECT_SEQUENCE: 'sequence',
  OBJECT_TYPE: 'type',
  OBJECT_FUNCTION: 'function',
  OBJECT_EXTENSION: 'extension',
};

/** DROP kind [CONCURRENTLY] [IF EXISTS] a, b [CASCADE]; other object kinds are unsupported by name. */
export function translateDrop(s: DropStmt): StatementBody {
  const object = DROP_OBJECTS[s.removeType ?? ''];
  if (object === undefined) return { kind: 'unsupported', name: `DROP ${objectWord(s.removeType)}`, loc: 0 };
  return {
    kind: 'drop',
    object,
    names: (s.objects ?? []).map(objectName),
    ifExists: s.missing_ok === true,
    cascade: s.behavior === 'DROP_CASCADE',
    concurrently: s.concurrent === true,
    loc: 0,
  };
}

/** A dropped object's name: a list of names (tables, views, ...), one String (schemas), a TypeName or a function. */
function objectName(n: Node): QualifiedName {
  const [tag, body] = tagOf(n);
  let parts: string[];
  if (tag === 'List') parts = names((body as { items?: Node[] }).items);
  else if (tag === 'String') parts = names([n]);
  else if (tag === 'TypeName') parts = names((body as { names?: Node[] }).names);
  else if (tag === 'ObjectWithArgs') parts = names((body as { objname?: Node[] }).objname);
  else throw unsupportedNode(tag, -1);
  const name = parts.pop() ?? '';
  return { schema: parts.pop() ?? null, name };
}

/** TRUNCATE [TABLE] a, b [RESTART IDENTITY] [CASCADE]. */
export function translateTruncate(s: TruncateStmt): TruncateStatement {
  const tables = (s.relations ?? []).map((n) => {
    const r = bodyOf<RangeVar>(n, 'RangeVar');
    if (r === undefined) throw unsupportedNode(tagOf(n)[0], -1);
    return relationName(r);
  });
  return { kind: 'truncate', tables, restartIdentity: s.restart_seqs === true, cascade: s.behavior === 'DROP_CASCADE', loc: 0 };
}
