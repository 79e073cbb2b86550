/**
 * Table and index ids are never handed out twice: dropping the newest table and creating another
 * used to give the new one the dropped one's id, so anything following a table by id (a CDC
 * stream, a webhook, a cache) could meet an unrelated table under it — another tenant's included.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TablesProjection } from '../../projections/index.js';
import { silentLogger } from '../../core/logger.js';
import { openStack } from '../helpers/stack.js';
import { openSql, type SqlHarness } from '../query/helpers.js';

let h: SqlHarness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const idOf = (harness: SqlHarness, name: string): number => harness.stack.projections.catalog.tableByName('default', 'public', name)!.def.id;

describe('table ids', () => {
  it("a dropped table's id (and its indexes') is never given to a new table, across a restart", async () => {
    h = await openSql();
    await h.q('CREATE TABLE a (id INT PRIMARY KEY)');
    await h.q('CREATE TABLE b (id INT PRIMARY KEY, v INT)');
    await h.q('CREATE INDEX b_v ON b (v)');
    const dropped = idOf(h, 'b');
    const droppedIndex = h.stack.projections.catalog.tableByName('default', 'public', 'b')!.def.indexes.map((i) => i.id);
    await h.q('DROP TABLE b');
    await h.q('CREATE TABLE c (id INT PRIMARY KEY, v INT)');
    await h.q('CREATE INDEX c_v ON c (v)');
    // Row commits between catalog changes store the same highest ids again (kept encoded until they change).
    for (let i = 1; i <= 3; i++) await h.q('INSERT INTO a VALUES ($1)', [i]);
    expect(idOf(h, 'c')).toBeGreaterThan(dropped);
    const cIndexes = h.stack.projections.catalog.tableByName('default', 'public', 'c')!.def.indexes.map((i) => i.id);
    for (const id of cIndexes) expect(droppedIndex).not.toContain(id);
    // After a restart the highest ids come back from the store.
    const c = idOf(h, 'c');
    const highest = h.stack.projections.catalog.maxIds();
    await h.q('DROP TABLE c');
    await h.q('INSERT INTO a VALUES ($1)', [4]);
    await h.stack.projections.stop();
    const reloaded = await TablesProjection.load(h.stack.store, silentLogger);
    expect(reloaded.catalog.maxIds().tableId).toBe(c);
    expect(reloaded.catalog.maxIds()).toEqual(highest);
  });

  it('a fresh stack starts at no id', async () => {
    const { tempDir } = await import('../helpers/stack.js');
    const dir = await tempDir();
    const stack = await openStack(dir.dir);
    try {
      expect(stack.projections.catalog.maxIds()).toEqual({ tableId: 0, indexId: 0 });
    } finally {
      await stack.close();
      await dir.remove();
    }
  });
});
