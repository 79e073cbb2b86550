import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { openStateStore, rebuildProjections } from '../../projections/index.js';
import { consumerOffsetKey } from '../../projections/keys.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { openLogAt, openStack, tempDir, type Stack } from '../helpers/stack.js';

/**
 * A column id is never used twice in a table, nor a table id twice (PostgreSQL never reuses an
 * attnum): rows written before DROP COLUMN keep the dropped value under its id, so a column added
 * later under that id would show it (a TEXT column answering the dropped INTEGER's 10). The highest
 * ids ever used survive a restart, a replay and a DDL batch.
 */
describe('ids of dropped columns and tables are never given again', () => {
  const OPTIONS = { timeoutMs: 30_000, maxRows: 100, tenant: 'default' };
  let dir: { dir: string; remove: () => Promise<void> } | null = null;
  let stack: Stack | null = null;
  afterEach(async () => {
    await stack?.close();
    stack = null;
    await dir?.remove();
    dir = null;
  });

  const open = async (): Promise<SqlEngine> => {
    dir ??= await tempDir('svcdb-column-ids-');
    stack = await openStack(dir.dir);
    return new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
  };
  /** Closes the stack (the data dir stays); its layout, to work on the closed store or log. */
  const close = async (): Promise<Stack['layout']> => {
    const layout = stack!.layout;
    await stack!.close();
    stack = null;
    return layout;
  };
  const reopen = async (): Promise<SqlEngine> => {
    await close();
    return open();
  };
  const rows = async (engine: SqlEngine, sql: string) => (await engine.execute(sql, OPTIONS)).rows;

  it('DROP COLUMN of the last column, then ADD COLUMN: the new column is NULL in old rows (every read path)', async () => {
    const engine = await open();
    await engine.execute('CREATE TABLE t (id BIGINT PRIMARY KEY, a TEXT, b INTEGER)', OPTIONS);
    await engine.execute("INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20)", OPTIONS);
    await engine.execute('SELECT * FROM t WHERE id = 1', OPTIONS);
    await engine.execute('ALTER TABLE t DROP COLUMN b', OPTIONS);
    await engine.execute('ALTER TABLE t ADD COLUMN n TEXT', OPTIONS);
    expect(await rows(engine, 'SELECT * FROM t ORDER BY id')).toEqual([
      { id: 1, a: 'x', n: null },
      { id: 2, a: 'y', n: null },
    ]);
    expect(await rows(engine, 'SELECT * FROM t WHERE id = 1')).toEqual([{ id: 1, a: 'x', n: null }]);
    expect((await engine.execute('SELECT * FROM t WHERE id = $1', { ...OPTIONS, params: [2] })).rows).toEqual([{ id: 2, a: 'y', n: null }]);
    expect(await rows(engine, 'SELECT count(*) AS c FROM t WHERE n IS NULL')).toEqual([{ c: 2 }]);
  });

  it('DROP COLUMN and ADD COLUMN in one ALTER TABLE', async () => {
    const engine = await open();
    await engine.execute('CREATE TABLE t (id BIGINT PRIMARY KEY, b INTEGER)', OPTIONS);
    await engine.execute('INSERT INTO t VALUES (1, 10)', OPTIONS);
    await engine.execute('ALTER TABLE t DROP COLUMN b, ADD COLUMN n TEXT, ADD COLUMN m INTEGER', OPTIONS);
    expect(await rows(engine, 'SELECT * FROM t')).toEqual([{ id: 1, n: null, m: null }]);
  });

  it('after a restart and after a replay of the log, and in a DDL batch', async () => {
    let engine = await open();
    await engine.execute('CREATE TABLE t (id BIGINT PRIMARY KEY, b INTEGER)', OPTIONS);
    await engine.execute('INSERT INTO t VALUES (1, 10)', OPTIONS);
    await engine.execute('ALTER TABLE t DROP COLUMN b', OPTIONS);
    engine = await reopen();
    await engine.execute('ALTER TABLE t ADD COLUMN n TEXT', OPTIONS);
    expect(await rows(engine, 'SELECT * FROM t')).toEqual([{ id: 1, n: null }]);

    await engine.execute("UPDATE t SET n = 'kept'", OPTIONS);
    await engine.execute('ALTER TABLE t DROP COLUMN n', OPTIONS);
    // Rebuild every projection from the log, as `svcdb replay` does.
    const layout = await close();
    const liveStore = await openStateStore(layout.stateDir);
    const log = await openLogAt(layout.logDir);
    try {
      await rebuildProjections({ log, layout, liveStore, batchBytesMax: 4096, logger: silentLogger, onProgress: () => {}, workerThreads: 0 });
    } finally {
      await log.close();
    }
    engine = await open();
    // A batch validates against a staged copy of the catalog: it keeps the ids ever used too.
    await engine.executeDdlBatch(['ALTER TABLE t ADD COLUMN m TEXT'], OPTIONS);
    expect(await rows(engine, 'SELECT * FROM t')).toEqual([{ id: 1, m: null }]);
  });

  it('a store from before the highest column ids were kept: read once from the stored rows', async () => {
    let engine = await open();
    await engine.execute('CREATE TABLE t (id BIGINT PRIMARY KEY, a TEXT, b INTEGER)', OPTIONS);
    await engine.execute("INSERT INTO t VALUES (1, 'x', 10)", OPTIONS);
    await engine.execute('ALTER TABLE t DROP COLUMN b', OPTIONS);
    const layout = await close();
    // As the tables projection stored its ids before: table and index ids only.
    const store = await openStateStore(layout.stateDir);
    const key = consumerOffsetKey('tables:ids-high');
    const stored = JSON.parse(Buffer.from((await store.get(key))!).toString('utf8')) as { tableId: number; indexId: number };
    await store.write([{ type: 'put', key, value: Buffer.from(JSON.stringify({ tableId: stored.tableId, indexId: stored.indexId })) }]);
    await store.close();
    engine = await open();
    await engine.execute('ALTER TABLE t ADD COLUMN n TEXT', OPTIONS);
    expect(await rows(engine, 'SELECT * FROM t')).toEqual([{ id: 1, a: 'x', n: null }]);
    // And kept from then on.
    engine = await reopen();
    await engine.execute('ALTER TABLE t DROP COLUMN n', OPTIONS);
    await engine.execute("UPDATE t SET a = 'y'", OPTIONS);
    engine = await reopen();
    await engine.execute('ALTER TABLE t ADD COLUMN m INTEGER', OPTIONS);
    expect(await rows(engine, 'SELECT * FROM t')).toEqual([{ id: 1, a: 'y', m: null }]);
  });

  it('a table created in a DDL batch after DROP TABLE gets a new table id', async () => {
    const engine = await open();
    await engine.execute('CREATE TABLE first (id BIGINT PRIMARY KEY)', OPTIONS);
    await engine.execute('CREATE TABLE second (id BIGINT PRIMARY KEY)', OPTIONS);
    const dropped = stack!.projections.catalog.tableByName('default', 'public', 'second')!.def.id;
    await engine.execute('DROP TABLE second', OPTIONS);
    await engine.executeDdlBatch(['CREATE TABLE third (id BIGINT PRIMARY KEY)'], OPTIONS);
    expect(stack!.projections.catalog.tableByName('default', 'public', 'third')!.def.id).toBeGreaterThan(dropped);
  });
});
