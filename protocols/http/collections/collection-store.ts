import { DEFAULT_SCHEMA } from '../../../core/catalog.js';
import { SvcError, isSvcError } from '../../../core/errors.js';
import type { CatalogState } from '../../../projections/index.js';
import type { ExecuteOptions, SqlEngine } from '../../../query/index.js';
import { MALFORMED_REQUEST_CODE } from '../../errors.js';
import { collectionNotFound, createCollectionSql, findCollection, requireCollection, type Collection } from './collection-table.js';
import { deleteSql, getSql, insertRow, listSql, mergeSql, replacedColumns } from './collection-sql.js';
import { resourceOf, rowWriteOf } from './resource.js';
import { UuidV7Source, isUuid } from './uuid.js';

export interface CollectionStoreDeps {
  readonly engine: SqlEngine;
  /** The catalog as of the last applied write (projections.catalog). */
  readonly catalog: CatalogState;
  /** SVC_COLLECTIONS_AUTO_CREATE: a write to a missing collection creates its table. */
  readonly autoCreate: boolean;
}

/** Who asks, as the engine needs it: tenant, role scope, deadline. */
export type Caller = ExecuteOptions;

type Resource = Record<string, unknown>;

/**
 * The collection operations, each one SQL statement (or one JSON insert) through the engine: its
 * validation, its tenant and role checks, one log record per write, read-your-writes.
 */
export class CollectionStore {
  private readonly ids = new UuidV7Source();

  constructor(private readonly deps: CollectionStoreDeps) {}

  /** A page of resources; a missing collection is empty while auto-creation is on (it springs up on the first write). */
  async list(name: string, page: { limit: number; offset: number }, caller: Caller): Promise<Resource[]> {
    const collection = findCollection(this.deps.catalog, caller.tenant, name);
    if (collection === null) {
      if (this.deps.autoCreate) return [];
      throw collectionNotFound(name);
    }
    const statement = listSql(collection, page.limit, page.offset);
    const result = await this.deps.engine.execute(statement.sql, { ...caller, params: statement.params, maxRows: page.limit });
    return result.rows.map((row) => resourceOf(collection, row));
  }

  async get(name: string, id: string, caller: Caller): Promise<Resource> {
    const collection = requireCollection(this.deps.catalog, caller.tenant, name);
    const found = await this.read(collection, checkedId(collection, id), caller);
    if (found === null) throw itemNotFound(name, id);
    return found;
  }

  /** POST: a new resource (id generated unless given); 409 CONSTRAINT_VIOLATION when the id is taken. */
  async create(name: string, body: unknown, caller: Caller): Promise<Resource> {
    const collection = await this.ensure(name, caller);
    const write = rowWriteOf(collection, body, 'create', null);
    const given = write.columns[collection.id.name];
    const id = given !== undefined ? given : collection.id.type.name === 'uuid' ? this.ids.next() : undefined;
    const row = insertRow(collection, write, id, new Date().toISOString());
    const result = await this.deps.engine.insertJson({ schema: DEFAULT_SCHEMA, table: name, rows: [row], returning: ['*'], onConflict: null }, caller);
    return resourceOf(collection, result.rows[0]!);
  }

  /**
   * PUT: the resource at `id` becomes the body (columns not given take their defaults, created_at
   * stays), or is created there. One atomic upsert; `created` comes from a read just before, so
   * under a concurrent create of the same id it may say false where true would be exact.
   */
  async replace(name: string, id: string, body: unknown, caller: Caller): Promise<{ resource: Resource; created: boolean }> {
    const collection = await this.ensure(name, caller);
    const key = checkedId(collection, id);
    const write = rowWriteOf(collection, body, 'replace', key);
    const existed = (await this.read(collection, key, caller)) !== null;
    const row = insertRow(collection, write, key, new Date().toISOString());
    const onConflict = { columns: [collection.id.name], action: 'update' as const, updateColumns: replacedColumns(collection) };
    const result = await this.deps.engine.insertJson({ schema: DEFAULT_SCHEMA, table: name, rows: [row], returning: ['*'], onConflict }, caller);
    return { resource: resourceOf(collection, result.rows[0]!), created: !existed };
  }

  /** PATCH: the fields given change, the others stay (extra fields merged by key; null removes one). */
  async merge(name: string, id: string, body: unknown, caller: Caller): Promise<Resource> {
    const collection = requireCollection(this.deps.catalog, caller.tenant, name);
    const key = checkedId(collection, id);
    const write = rowWriteOf(collection, body, 'merge', key);
    const statement = mergeSql(collection, write, key, new Date().toISOString());
    if (statement === null) return this.get(name, id, caller);
    const result = await this.deps.engine.execute(statement.sql, { ...caller, params: statement.params });
    if (result.rows.length === 0) throw itemNotFound(name, id);
    return resourceOf(collection, result.rows[0]!);
  }

  async remove(name: string, id: string, caller: Caller): Promise<void> {
    const collection = requireCollection(this.deps.catalog, caller.tenant, name);
    const statement = deleteSql(collection, checkedId(collection, id));
    const result = await this.deps.engine.execute(statement.sql, { ...caller, params: statement.params });
    if (!result.affectedRows) throw itemNotFound(name, id);
  }

  private async read(collection: Collection, id: string, caller: Caller): Promise<Resource | null> {
    const statement = getSql(collection, id);
    const result = await this.deps.engine.execute(statement.sql, { ...caller, params: statement.params, maxRows: 1 });
    return result.rows.length === 0 ? null : resourceOf(collection, result.rows[0]!);
  }

  /** The collection, its table created first when it is missing and auto-creation is on. */
  private async ensure(name: string, caller: Caller): Promise<Collection> {
    const found = findCollection(this.deps.catalog, caller.tenant, name);
    if (found !== null) return found;
    if (!this.deps.autoCreate) throw collectionNotFound(name);
    try {
      await this.deps.engine.executeDdlBatch([createCollectionSql(name)], { ...caller, maxRows: 1 });
    } catch (error) {
      // Two first writes at once: the other one created it, which is as good.
      if (!(isSvcError(error) && error.details.reason === 'already_exists')) throw error;
    }
    return requireCollection(this.deps.catalog, caller.tenant, name);
  }
}

function itemNotFound(name: string, id: string): SvcError {
  return new SvcError('NOT_FOUND', `collection "${name}" has no item with id ${id}`, { collection: name, id });
}

/** The id of a URL, checked against the id column: a UUID column takes only UUIDs (400). */
function checkedId(collection: Collection, id: string): string {
  if (collection.id.type.name === 'uuid' && !isUuid(id)) {
    throw new SvcError(MALFORMED_REQUEST_CODE, `"${id}" is not a UUID: the ids of collection "${collection.def.name}" are UUIDs`, {
      reason: 'schema_validation',
      location: 'params',
      field: 'id',
    });
  }
  return id;
}
