import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/random.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * A single-row insert of a key above the table's known row-key bound is written without a read or
 * a promise (TableWriter.insertKnownNew): only for tables whose one constraint to read for is the
 * primary key. Two tables get the same random single-row inserts, through JSON rows and a kept
 * INSERT binding alike: `fast` (primary key only: the direct path whenever the key is new and
 * highest) and `slow` (an extra unique index, always equal to the key, so every row takes the
 * general insert()). Ascending runs, repeats of the last key (pending or stored), lower keys, NULL
 * keys, NOT NULL and CHECK refusals, concurrent inserts of one key, two-statement batches (a
 * transaction) and DROP + CREATE between: every answer (table name aside) and the rows left agree.
 * The engine's count of inserts the direct path wrote (insertPathStats) shows it ran for `fast`
 * (else the two tables would agree trivially) and never for `slow`.
 */
describe('single-row inserts of new highest keys answer as the general path does', () => {
  let h: SqlHarness;
  const BASE = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
  const DDL = {
    fast: 'CREATE TABLE fast (id BIGINT PRIMARY KEY, name TEXT NOT NULL, n INTEGER CHECK (n >= 0), u BIGINT)',
    slow: 'CREATE TABLE slow (id BIGINT PRIMARY KEY, name TEXT NOT NULL, n INTEGER CHECK (n >= 0), u BIGINT UNIQUE)',
  };
  type Table = keyof typeof DDL;
  type Row = { id: number | null; name: string | null; n: number; u: number | null };

  const outcome = async (table: Table, run: Promise<unknown>): Promise<string> => {
    try {
      const result = (await run) as { affectedRows: number | null };
      return `ok ${result.affectedRows}`;
    } catch (error) {
      const e = error as { code: string; message: string };
      return `${e.code}: ${e.message.replaceAll(table, 'T')}`;
    }
  };
  const json = (table: Table, row: Row) => h.engine.insertJson({ schema: null, table, rows: [row], returning: [], onConflict: null }, BASE);
  const sql = (table: Table, row: Row) =>
    h.engine.execute(`INSERT INTO ${table} (id, name, n, u) VALUES ($1, $2, $3, $4)`, { ...BASE, params: [row.id, row.name, row.n, row.u] });
  const batch = (table: Table, a: Row, b: Row) =>
    h.engine.execute(
      `INSERT INTO ${table} VALUES (${a.id}, '${a.name}', ${a.n}, ${a.u}); INSERT INTO ${table} VALUES (${b.id}, '${b.name}', ${b.n}, ${b.u})`,
      BASE,
    );

  beforeAll(async () => {
    h = await openSql({
      transactions: { transactionTimeoutMsDefault: 30_000, transactionTimeoutMsMax: 60_000, transactionsOpenMax: 8, sqlDmlRowsMax: 10_000 },
    });
    await h.q(DDL.fast);
    await h.q(DDL.slow);
  });
  afterAll(() => h?.close());

  it('random steps give the same answers and rows on both tables', async () => {
    const random = seededRandom(16);
    let top = 0;
    const answers: Record<Table, string[]> = { fast: [], slow: [] };
    const direct: Record<Table, number> = { fast: 0, slow: 0 };
    const knownNew = (): number => h.engine.insertPathStats().knownNew;
    for (let step = 0; step < 400; step++) {
      const pick = random();
      let id: number | null;
      if (pick < 0.55) id = ++top;
      else if (pick < 0.7) id = top;
      else if (pick < 0.8) id = Math.floor(random() * (top + 3));
      else if (pick < 0.85) id = null;
      else id = top + 1 + Math.floor(random() * 3);
      if (id !== null && id > top) top = id;
      const row: Row = { id, name: random() < 0.05 ? null : `r${step}`, n: random() < 0.05 ? -1 : step, u: id };
      const how = random();
      for (const table of ['fast', 'slow'] as const) {
        const before = knownNew();
        if (how < 0.1) {
          // Two writers of the same new key at once: one wins, the other sees it pending.
          const both = await Promise.all([outcome(table, json(table, row)), outcome(table, sql(table, { ...row, name: 'twin' }))]);
          answers[table].push(both.join(' | '));
        } else if (how < 0.15 && id !== null) {
          // Two statements of one request: a transaction (its writer tracks reads, no direct path).
          answers[table].push(await outcome(table, batch(table, { ...row, name: 'b1' }, { ...row, id: id + 1, u: id + 1, name: 'b2' })));
        } else if (how < 0.6) answers[table].push(await outcome(table, json(table, row)));
        else answers[table].push(await outcome(table, sql(table, row)));
        direct[table] += knownNew() - before;
      }
      if (how >= 0.1 && how < 0.15 && id !== null && id + 1 > top) top = id + 1;
      if (step === 200) {
        // A catalog change forgets the known bounds: the tables are read again.
        for (const table of ['fast', 'slow'] as const) {
          await h.q(`DROP TABLE ${table}`);
          await h.q(DDL[table]);
        }
        top = Math.floor(top / 2);
      }
    }
    expect(answers.fast).toEqual(answers.slow);
    // The direct path wrote most of fast's rows (~55% of the steps ascend; 243 of 282 when written), only rows that
    // were inserted, and none of slow's.
    expect(direct.slow).toBe(0);
    expect(direct.fast).toBeGreaterThan(200);
    expect(direct.fast).toBeLessThanOrEqual(answers.fast.join('\n').split('ok 1').length - 1);
    // Every kind of answer happened.
    const all = answers.fast.join('\n');
    for (const kind of ['ok 1', 'duplicate key', 'null value in column "id"', 'null value in column "name"', 'check constraint']) expect(all).toContain(kind);
    expect(await h.rows('SELECT id, name, n, u FROM fast ORDER BY id')).toEqual(await h.rows('SELECT id, name, n, u FROM slow ORDER BY id'));
  });
});
