import { matviewQuery, type TableDef } from '../../core/catalog.js';
import { isSvcError, SvcError, tableNotFound } from '../../core/errors.js';
import type { TxnOp } from '../../core/log-records.js';
import type { CatalogState } from '../../projections/index.js';
import { invalid, QueryBinder, relationLabel, Scope } from '../bind/index.js';
import { parseSql } from '../parse/index.js';
import type { DropStatement, TruncateStatement } from '../parse/index.js';
import { emptyResult, type QueryResult } from '../result.js';
import { nowMicros, referencingTables, tableRef, catalogRecord } from './common.js';
import { submitDdl, type DdlDeps } from './deps.js';

type RelationKind = 'table' | 'view' | 'materialized_view';
const KIND_WORDS: Readonly<Record<RelationKind, 'table' | 'view' | 'materialized view'>> = {
  table: 'table',
  view: 'view',
  materialized_view: 'materialized view',
};
const KIND_ARTICLES: Readonly<Record<RelationKind, string>> = { table: 'a table', view: 'a view', materialized_view: 'a materialized view' };

/** DROP TABLE|VIEW|MATERIALIZED VIEW [IF EXISTS] a, b [CASCADE]: FKs of other tables referencing them go too with CASCADE. */
export async function dropTables(ast: DropStatement, deps: DdlDeps, keyword: RelationKind): Promise<QueryResult> {
  const { names, cascade, ifExists } = ast;
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    const targets: TableDef[] = [];
    for (const n of names) {
      const { schema, name } = tableRef(n);
      const entry = view.catalog.tableByName(tenant, schema, name);
      if (!entry) {
        if (ifExists) continue;
        throw tableNotFound(name, { noun: KIND_WORDS[keyword] });
      }
      if (entry.def.kind !== keyword) throw notKind(name, keyword, entry.def.kind);
      targets.push(entry.def);
    }
    if (targets.length === 0) return null;
    const ops: TxnOp[] = [];
    const all = withDependentViews(view.catalog, deps, targets, cascade);
    const dropped = new Set(all.map((t) => t.id));
    for (const t of all) ops.push(...detachReferences(view.catalog, t, dropped, cascade));
    for (const t of all) ops.push({ kind: 'drop_table', tableId: t.id });
    return { record: catalogRecord(tenant, ops), result: null };
  });
  return emptyResult(`DROP ${KIND_WORDS[keyword].toUpperCase()}`);
}

/** PostgreSQL's 42809 with its hint naming the statement that drops what `name` is. */
function notKind(name: string, wanted: RelationKind, found: RelationKind): SvcError {
  return new SvcError('INVALID_QUERY', `"${name}" is not ${KIND_ARTICLES[wanted]}`, {
    name,
    sqlstate: '42809',
    hint: `Use DROP ${KIND_WORDS[found].toUpperCase()} to remove ${KIND_ARTICLES[found]}.`,
  });
}

/** The targets plus the views that read them (transitively); without CASCADE such views refuse the drop. */
function withDependentViews(catalog: CatalogState, deps: DdlDeps, targets: readonly TableDef[], cascade: boolean): TableDef[] {
  const out = [...targets];
  const ids = new Set(targets.map((t) => t.id));
  for (let changed = true; changed;) {
    changed = false;
    for (const entry of catalog.tables()) {
      const v = entry.def;
      if (v.kind === 'table' || ids.has(v.id) || v.tenant !== targets[0]!.tenant) continue;
      const read = viewReads(catalog, deps, v);
      const hit = out.find((t) => read.has(t.id));
      if (!hit) continue;
      if (!cascade) {
        throw new SvcError('CONSTRAINT_VIOLATION', `cannot drop ${KIND_WORDS[hit.kind]} ${hit.name} because other objects depend on it`, {
          table: hit.name,
          dependent_view: v.name,
          hint: 'Use DROP ... CASCADE to drop the dependent objects too.',
        });
      }
      out.push(v);
      ids.add(v.id);
      changed = true;
    }
  }
  return out;
}

/** Ids of the tables and views a view's query reads (empty when it no longer binds). */
function viewReads(catalog: CatalogState, deps: DdlDeps, v: TableDef): Set<number> {
  try {
    const ctx = deps.bindContext(catalog);
    const body = parseSql(v.kind === 'view' ? (v.viewSql ?? '') : matviewQuery(v))[0]!.body;
    if (body.kind !== 'query') return new Set();
    new QueryBinder(ctx).bindQuery(body.query, new Scope(null));
    return new Set(ctx.tablesUsed.keys());
  } catch (error) {
    if (!isSvcError(error)) throw error;
    return new Set();
  }
}

function detachReferences(catalog: CatalogState, table: TableDef, dropped: Set<number>, cascade: boolean): TxnOp[] {
  const ops: TxnOp[] = [];
  for (const child of referencingTables(catalog, table)) {
    if (dropped.has(child.def.id)) continue;
    const fk = child.def.constraints.find((c) => c.references?.tableId === table.id)!;
    if (!cascade) {
      throw new SvcError('CONSTRAINT_VIOLATION', `cannot drop table ${table.name} because other objects depend on it`, {
        table: table.name,
        constraint: fk.name,
        referencing_table: child.def.name,
        hint: 'Use DROP ... CASCADE to drop the dependent objects too.',
      });
    }
    const constraints = child.def.constraints.filter((c) => c.references?.tableId !== table.id);
    ops.push({ kind: 'put_table', table: { ...child.def, constraints, updatedAtMicros: nowMicros() } });
  }
  return ops;
}

/** DROP INDEX [IF EXISTS] name [CASCADE]. Indexes backing a PRIMARY KEY or UNIQUE constraint need CASCADE. */
export async function dropIndex(ast: DropStatement, deps: DdlDeps): Promise<QueryResult> {
  if (ast.names.length !== 1) throw invalid('DROP INDEX of several indexes at once is not supported; drop them one by one', { reason: 'unsupported' });
  const schema = ast.names[0]!.schema ?? 'public';
  const { name } = ast.names[0]!;
  const { ifExists, cascade } = ast;
  const tenant = deps.env.tenant;
  await submitDdl(deps, async (view) => {
    for (const entry of view.catalog.tables()) {
      const def = entry.def;
      if (def.tenant !== tenant || def.schema !== schema) continue;
      const index = def.indexes.find((i) => i.name === name);
      if (!index) continue;
      const constraint = def.constraints.find((c) => c.name === name && (c.kind === 'unique' || c.kind === 'primary_key'));
      if (index.primary) throw invalid(`cannot drop index ${name} because constraint ${name} on table ${def.name} requires it`);
      if (constraint && !cascade) throw invalid(`cannot drop index ${name} because constraint ${name} on table ${def.name} requires it`);
      const next: TableDef = {
        ...def,
        indexes: def.indexes.filter((i) => i.id !== index.id),
        constraints: def.constraints.filter((c) => c !== constraint),
        updatedAtMicros: nowMicros(),
      };
      return { record: catalogRecord(tenant, [{ kind: 'put_table', table: next }]), result: null };
    }
    if (ifExists) return null;
    throw tableNotFound(name, { noun: 'index' });
  });
  return emptyResult('DROP INDEX');
}

/** TRUNCATE [TABLE] a, b [CASCADE]: tables referenced by other tables' foreign keys need those too (or CASCADE). */
export async function truncate(ast: TruncateStatement, deps: DdlDeps): Promise<QueryResult> {
  const tenant = deps.env.tenant;
  const { cascade } = ast;
  await submitDdl(deps, async (view) => {
    const tables = ast.tables.map((n) => {
      const { schema, name } = tableRef(n);
      const entry = view.catalog.tableByName(tenant, schema, name);
      if (!entry) throw tableNotFound(relationLabel(n.schema, name));
      if (entry.def.kind !== 'table') throw new SvcError('INVALID_QUERY', `"${name}" is not a table`, { name, sqlstate: '42809' });
      return entry.def;
    });
    const ids = new Set(tables.map((t) => t.id));
    for (let i = 0; i < tables.length; i++) {
      for (const child of referencingTables(view.catalog, tables[i]!)) {
        if (ids.has(child.def.id)) continue;
        if (!cascade) {
          throw new SvcError('CONSTRAINT_VIOLATION', 'cannot truncate a table referenced in a foreign key constraint', {
            table: child.def.name,
            referenced_table: tables[i]!.name,
            hint: `Truncate table "${child.def.name}" at the same time, or use TRUNCATE ... CASCADE.`,
          });
        }
        ids.add(child.def.id);
        tables.push(child.def);
      }
    }
    return { record: catalogRecord(tenant, [{ kind: 'truncate', tableIds: [...ids] }]), result: null };
  });
  return emptyResult('TRUNCATE TABLE');
}
