import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeKey } from '../../core/key-encoding.js';
import { encodeRow } from '../../core/row-codec.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import type { WriteView } from '../../projections/index.js';
import { keyText } from '../../core/key-text.js';
import { StatementWriter } from '../../query/dml/statement-writer.js';
import type { QValue } from '../../query/types/contract.js';
import { typeSystem } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * TableWriter.insertMany's fresh-key path (keys ascending, first rows of the table in the
 * statement) keeps no key text and no map entry per row until something asks: whatever the
 * statement does next with the table must see those rows exactly as the row-by-row path leaves them.
 */
describe('insertMany: rows of a fresh bulk stay visible to the rest of the statement', () => {
  let h: SqlHarness;
  const int8: SqlType = { name: 'int8' };
  const row = (id: number, name: string | null = `n${id}`): QValue[] => [BigInt(id), name];
  const ids = (from: number, to: number): QValue[][] => Array.from({ length: to - from + 1 }, (_, i) => row(from + i));

  /** Runs `body` with a StatementWriter over the sequencer's write view; appends nothing. */
  const inStatement = async (body: (statement: StatementWriter, view: WriteView) => Promise<void>): Promise<void> => {
    await h.stack.projections.sequencer.submit(async (view) => {
      await body(new StatementWriter(view, typeSystem, () => [], 1_000_000), view);
      return null;
    });
  };
  const table = () => h.stack.projections.catalog.tableByName('default', 'public', 'm')!.def;

  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE m (id BIGINT PRIMARY KEY, name TEXT NOT NULL)');
    await h.q(`INSERT INTO m VALUES ${Array.from({ length: 100 }, (_, i) => `(${i + 1}, 'stored')`).join(', ')}`);
  });
  afterAll(async () => {
    await h.close();
  });

  it("a second insert into the table in the same statement meets the first one's keys", async () => {
    await inStatement(async (statement) => {
      const writer = statement.writer(table());
      await writer.insertMany(ids(200, 499));
      const again = await caught(writer.insertMany([...ids(500, 599), row(300)]));
      expect(again.message).toBe('duplicate key value violates unique constraint "m_pkey"');
      expect(JSON.stringify(again.details)).toContain('(id)=(300)');
      const single = await caught(writer.insert(row(450)));
      expect(JSON.stringify(single.details)).toContain('(id)=(450)');
    });
  });

  it('pending holds every inserted row with the image the row-by-row path writes, in order', async () => {
    await inStatement(async (statement) => {
      const def = table();
      const writer = statement.writer(def);
      const rows = ids(1000, 1299);
      await writer.insertMany(rows);
      const expected = rows.map((r) => [keyText(encodeKey([int8], [r[0] as SqlValue])), [...encodeRow(def.columns, r as SqlValue[])]]);
      expect([...writer.pending].map(([k, image]) => [k, [...image!]])).toEqual(expected);
      expect(statement.ops).toHaveLength(300);
      // The image as the statement sees it, and a row it never wrote.
      expect([...(await writer.current(encodeKey([int8], [1100n])))!]).toEqual(expected[100]![1]);
      expect(await writer.current(encodeKey([int8], [5000n]))).toBeUndefined();
      expect([...(await writer.current(encodeKey([int8], [7n])))!]).toEqual([...encodeRow(def.columns, [7n, 'stored'])]);
    });
  });

  it('a row refused half way leaves exactly the rows before it pending', async () => {
    await inStatement(async (statement) => {
      const writer = statement.writer(table());
      const rows = ids(2000, 2299);
      rows[150] = row(2150, null);
      const error = await caught(writer.insertMany(rows));
      expect(error.code).toBe('CONSTRAINT_VIOLATION');
      expect(writer.pending.size).toBe(150);
      expect(writer.pending.has(keyText(encodeKey([int8], [2149n])))).toBe(true);
      expect(writer.pending.has(keyText(encodeKey([int8], [2150n])))).toBe(false);
    });
  });

  it('keys at or below the stored ones and a stored duplicate: the stored row decides', async () => {
    await inStatement(async (statement) => {
      const writer = statement.writer(table());
      const error = await caught(writer.insertMany([...ids(-300, -1), row(50)]));
      expect(JSON.stringify(error.details)).toContain('(id)=(50)');
    });
    // Nothing was appended: the table holds what it held.
    expect(await h.rows('SELECT count(*) AS n FROM m')).toEqual([{ n: 100 }]);
  });
});

/**
 * The sequencer keeps, per table, a key no row sorts after (projections/row-key-bounds.ts): a bulk
 * insert whose keys all sort above it reads nothing. Every way a row can come to sort higher must
 * raise it, or the duplicate would be written twice.
 */
describe('the row key bound follows every write', () => {
  let h: SqlHarness;
  const values = (from: number, to: number, extra: number[] = []): string =>
    [...Array.from({ length: to - from + 1 }, (_, i) => from + i), ...extra].map((id) => `(${id}, 'r')`).join(', ');
  const dupOf = async (sql: string): Promise<string> => JSON.stringify((await caught(h.q(sql))).details);

  beforeAll(async () => {
    h = await openSql({
      transactions: { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 100_000 },
    });
    await h.q('CREATE TABLE k (id BIGINT PRIMARY KEY, name TEXT)');
  });
  afterAll(async () => {
    await h.close();
  });

  it('single-row inserts, updates of the key, transactions and a table made again all raise or reset it', async () => {
    await h.q(`INSERT INTO k VALUES ${values(1, 100)}`); // the bound is learned (no rows), then raised to 100
    await h.q("INSERT INTO k VALUES (5000, 'single')");
    expect(await dupOf(`INSERT INTO k VALUES ${values(1000, 1299)}, (5000, 'again')`)).toContain('(id)=(5000)');
    await h.q('UPDATE k SET id = 9000 WHERE id = 1');
    expect(await dupOf(`INSERT INTO k VALUES ${values(6000, 6299)}, (9000, 'again')`)).toContain('(id)=(9000)');
    await h.q("BEGIN; INSERT INTO k VALUES (12000, 'txn'); COMMIT");
    expect(await dupOf(`INSERT INTO k VALUES ${values(10000, 10299)}, (12000, 'again')`)).toContain('(id)=(12000)');
    // Keys above every row: no read, and they are written.
    await h.q(`INSERT INTO k VALUES ${values(20000, 20299)}`);
    expect(await h.rows('SELECT count(*) AS n, max(id) AS top FROM k')).toEqual([{ n: 402, top: 20299 }]);
    // A table dropped and made again under the same name starts with no rows.
    await h.q('DROP TABLE k');
    await h.q('CREATE TABLE k (id BIGINT PRIMARY KEY, name TEXT)');
    await h.q(`INSERT INTO k VALUES ${values(1, 300)}`);
    expect(await dupOf(`INSERT INTO k VALUES ${values(301, 600, [300])}`)).toContain('(id)=(300)');
    expect(await h.rows('SELECT count(*) AS n FROM k')).toEqual([{ n: 300 }]);
  });
});
