import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeLogRecord } from '../../core/log-records.js';
import { lsn } from '../../core/units.js';
import type { ExecuteOptions } from '../../query/index.js';
import { openSql, type SqlHarness } from './helpers.js';

const TXN_LIMITS = { transactionTimeoutMsDefault: 10_000, transactionTimeoutMsMax: 10_000, transactionsOpenMax: 4, sqlDmlRowsMax: 1000 };
const BASE = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };

type Outcome = { ok: true; command: string; affected: number | null; rows: unknown[] } | { ok: false; code: string; message: string; details: unknown };

async function outcome(run: Promise<{ command: string; affectedRows: number | null; rows: unknown[] }>): Promise<Outcome> {
  try {
    const r = await run;
    return { ok: true, command: r.command, affected: r.affectedRows, rows: r.rows };
  } catch (error) {
    const e = error as { code: string; message: string; details: unknown };
    return { ok: false, code: e.code, message: e.message, details: e.details };
  }
}

/** Every committed row change and sequence value in a harness's log (ids and times of records left out). */
async function logOps(h: SqlHarness): Promise<unknown[]> {
  const ops: unknown[] = [];
  for await (const batch of h.stack.log.read(lsn(1))) {
    for (const entry of batch) {
      const record = decodeLogRecord(entry.payload);
      if (record.type !== 'txn') continue;
      for (const op of record.ops) if (op.kind === 'row' || op.kind === 'sequence') ops.push(op);
    }
  }
  return ops;
}

/**
 * The prepared INSERT (query/fast-insert.ts) against the general path: two engines run the same
 * steps; `fresh` gets every text once (a comment makes it new, so it is parsed and bound on every
 * run), `cached` gets the same text again (bound once, reused). Answers, errors (code, message,
 * details), rows and the log's row changes must be identical.
 */
describe('a cached INSERT binding answers as binding it again would', () => {
  let fresh: SqlHarness;
  let cached: SqlHarness;
  let nonce = 0;

  beforeAll(async () => {
    fresh = await openSql({ transactions: TXN_LIMITS });
    cached = await openSql({ transactions: TXN_LIMITS });
  });
  afterAll(async () => {
    await fresh?.close();
    await cached?.close();
  });

  /** Runs one statement on both engines; returns the (identical) outcome. */
  async function both(
    sql: string,
    params: unknown[] = [],
    options: { fresh?: Partial<ExecuteOptions>; cached?: Partial<ExecuteOptions> } = {},
  ): Promise<Outcome> {
    nonce += 1;
    const a = await outcome(fresh.engine.execute(`${sql} /* ${nonce} */`, { ...BASE, params, ...options.fresh }));
    const b = await outcome(cached.engine.execute(sql, { ...BASE, params, ...options.cached }));
    expect(b, sql).toEqual(a);
    return b;
  }

  async function sameState(table: string): Promise<void> {
    const a = await outcome(fresh.q(`SELECT * FROM ${table} ORDER BY 1`));
    const b = await outcome(cached.q(`SELECT * FROM ${table} ORDER BY 1`));
    expect(b).toEqual(a);
  }

  it('defaults, serial, NOT NULL, CHECK, unique and primary key conflicts, type errors, RETURNING', async () => {
    const ddl = "CREATE TABLE c (id SERIAL PRIMARY KEY, code TEXT UNIQUE, n INTEGER NOT NULL CHECK (n > 0), note TEXT DEFAULT 'none')";
    await both(ddl);
    const hitsBefore = cached.engine.insertCacheStats().hits;
    const insert = 'INSERT INTO c (code, n) VALUES ($1, $2) RETURNING id, code, n, note';
    expect(await both(insert, ['a', 1])).toMatchObject({ ok: true, rows: [{ id: 1, code: 'a', n: 1, note: 'none' }] });
    expect(await both(insert, ['b', 2])).toMatchObject({ ok: true, rows: [{ id: 2, code: 'b', n: 2, note: 'none' }] });
    expect(await both(insert, ['a', 3])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    expect(await both(insert, ['c', 0])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    expect(await both(insert, ['d', null])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    expect(await both(insert, ['e', 'x'])).toMatchObject({ ok: false });
    expect(await both(insert, ['f'])).toMatchObject({ ok: false, code: 'INVALID_QUERY' });
    expect(await both(insert, ['g', '7'])).toMatchObject({ ok: true, rows: [{ code: 'g', n: 7 }] });
    // An explicit primary key that clashes, DEFAULT in a cell, no column list, RETURNING *.
    expect(await both('INSERT INTO c VALUES ($1, $2, $3, DEFAULT) RETURNING *', [1, 'h', 1])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    expect(await both('INSERT INTO c VALUES ($1, $2, $3, DEFAULT) RETURNING *', [100, 'h', 1])).toMatchObject({ ok: true, rows: [{ id: 100, note: 'none' }] });
    expect(await both('INSERT INTO c (code, n, note) VALUES ($1, 5, NULL)', ['i'])).toMatchObject({ ok: true, affected: 1 });
    expect(await both('INSERT INTO c (code, n) VALUES ($1, $2), ($3, $4)', ['j', 1, 'k', -1])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    expect(await both('INSERT INTO c (code, n) VALUES ($1, $2), ($3, $4)', ['j', 1, 'k', 1])).toMatchObject({ ok: true, affected: 2 });
    await sameState('c');
    // The cached engine reused bindings; the fresh one could not (each text was new).
    expect(cached.engine.insertCacheStats().hits - hitsBefore).toBeGreaterThanOrEqual(8);
  });

  it('parameter cells take their own values: in any order, given twice, beside expressions and literals; a missing one fails', async () => {
    await both('CREATE TABLE pv (id BIGINT PRIMARY KEY, a TEXT, b TEXT, c TEXT, n DOUBLE PRECISION)');
    const insert = "INSERT INTO pv (c, id, a, b, n) VALUES ($2, $3, $1, $2 || 'x', $4) RETURNING *";
    for (let run = 0; run < 2; run++) {
      const rows = [{ id: 10 + run, a: `a${run}`, b: `c${run}x`, c: `c${run}`, n: run + 0.5 }];
      expect(await both(insert, [`a${run}`, `c${run}`, 10 + run, run + 0.5])).toEqual({ ok: true, command: 'INSERT', affected: 1, rows });
    }
    expect(await both('INSERT INTO pv VALUES ($1, $2, NULL, $2, 1.5) RETURNING *', ['20', 'same'])).toEqual({
      ok: true,
      command: 'INSERT',
      affected: 1,
      rows: [{ id: 20, a: 'same', b: null, c: 'same', n: 1.5 }],
    });
    const missing = await both('INSERT INTO pv (id, a, b) VALUES ($1, $2, $3)', [30, 'x']);
    expect(missing).toMatchObject({ ok: false, code: 'INVALID_QUERY', message: 'there is no parameter $3: the query uses 3 parameter(s) and 2 were given' });
    await sameState('pv');
  });

  it('follows ALTER TABLE ADD COLUMN, DROP COLUMN, a new CHECK and DROP TABLE between two identical INSERTs', async () => {
    await both('CREATE TABLE d (id INTEGER PRIMARY KEY, v TEXT, w INTEGER)');
    const insert = 'INSERT INTO d VALUES ($1, $2, $3) RETURNING *';
    const named = 'INSERT INTO d (id, v) VALUES ($1, $2) RETURNING *';
    await both(insert, [1, 'a', 1]);
    await both(named, [2, 'b']);
    await both("ALTER TABLE d ADD COLUMN x TEXT DEFAULT 'dx'");
    expect(await both(insert, [3, 'c', 3])).toMatchObject({ ok: true, rows: [{ id: 3, v: 'c', w: 3, x: 'dx' }] });
    expect(await both(named, [4, 'd'])).toMatchObject({ ok: true, rows: [{ id: 4, v: 'd', w: null, x: 'dx' }] });
    await both('ALTER TABLE d DROP COLUMN w');
    // Three values for what are now three columns: w is gone, the third value goes to x.
    expect(await both(insert, [5, 'e', '5'])).toMatchObject({ ok: true, rows: [{ id: 5, v: 'e', x: '5' }] });
    expect(await both(named, [6, 'f'])).toMatchObject({ ok: true, rows: [{ id: 6, v: 'f', x: 'dx' }] });
    await both('ALTER TABLE d ADD CONSTRAINT v_short CHECK (length(v) < 3)');
    expect(await both(named, [7, 'long'])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    await sameState('d');
    await both('DROP TABLE d');
    expect(await both(named, [8, 'g'])).toMatchObject({ ok: false });
    await both('CREATE TABLE d (id TEXT PRIMARY KEY, v NUMERIC(6,2))');
    expect(await both(named, ['nine', 9.5])).toMatchObject({ ok: true, rows: [{ id: 'nine', v: '9.50' }] });
    expect(await both(insert, ['ten', 10, 'extra'])).toMatchObject({ ok: false, code: 'INVALID_QUERY' });
    await sameState('d');
  });

  it('ON CONFLICT is not cached and answers as the general path', async () => {
    await both('CREATE TABLE e (id INTEGER PRIMARY KEY, n INTEGER)');
    const binds = cached.engine.insertCacheStats().binds;
    const upsert = 'INSERT INTO e VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = e.n + EXCLUDED.n RETURNING *';
    const nothing = 'INSERT INTO e VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING *';
    expect(await both(upsert, [1, 1])).toMatchObject({ ok: true, rows: [{ id: 1, n: 1 }] });
    expect(await both(upsert, [1, 5])).toMatchObject({ ok: true, rows: [{ id: 1, n: 6 }] });
    expect(await both(nothing, [1, 9])).toMatchObject({ ok: true, affected: 0, rows: [] });
    expect(await both(nothing, [2, 9])).toMatchObject({ ok: true, rows: [{ id: 2, n: 9 }] });
    expect(cached.engine.insertCacheStats().binds).toBe(binds);
    await sameState('e');
  });

  it('runs in an explicit transaction: staged, seen by the transaction, committed or rolled back', async () => {
    await both('CREATE TABLE f (id INTEGER PRIMARY KEY, t TEXT)');
    const insert = 'INSERT INTO f (id, t) VALUES ($1, $2)';
    await both(insert, [1, 'out']);
    for (const end of ['commit', 'rollback'] as const) {
      const a = await fresh.transactions!.begin({ tenant: 'default', isolation: 'read_committed', readOnly: false });
      const b = await cached.transactions!.begin({ tenant: 'default', isolation: 'read_committed', readOnly: false });
      const inTxn = { fresh: { transaction: { id: a.transactionId } }, cached: { transaction: { id: b.transactionId } } };
      const base = end === 'commit' ? 10 : 20;
      await both(insert, [base, 'in'], inTxn);
      await both(insert, [base + 1, 'in'], inTxn);
      const committed = end === 'commit' ? 1 : 3;
      expect(await both('SELECT count(*) AS n FROM f', [], inTxn)).toMatchObject({ ok: true, rows: [{ n: committed + 2 }] });
      expect(await both('SELECT count(*) AS n FROM f')).toMatchObject({ ok: true, rows: [{ n: committed }] });
      await fresh.transactions![end](a.transactionId, { tenant: 'default' });
      await cached.transactions![end](b.transactionId, { tenant: 'default' });
    }
    // In one request: BEGIN; INSERT; INSERT; COMMIT runs as one transaction, a failure undoes both.
    expect(await both(`BEGIN; ${insert}; ${insert}; COMMIT`, [30, 'batch'])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    await sameState('f');
    expect(await both('SELECT count(*) AS n FROM f')).toMatchObject({ ok: true, rows: [{ n: 3 }] });
  });

  it('rows of parameters, literals and DEFAULT (run without a promise) take their values and serials in the order binding would', async () => {
    await both("CREATE TABLE m (id SERIAL PRIMARY KEY, t TEXT NOT NULL, n BIGINT DEFAULT 7, k BIGSERIAL, note TEXT DEFAULT 'd')");
    const hits = cached.engine.insertCacheStats().hits;
    // Cells in another order than the table's, several rows, DEFAULT in a row's middle, a literal beside parameters.
    const insert = "INSERT INTO m (note, t, n) VALUES ($1, $2, DEFAULT), (DEFAULT, 'lit', $3), ($4, $2, $3) RETURNING *";
    for (let run = 0; run < 3; run++) {
      expect(await both(insert, [`x${run}`, `t${run}`, 10 + run, null])).toMatchObject({ ok: true, affected: 3 });
    }
    // A NULL for NOT NULL t in the second row: refused, nothing of the statement written, its serials not taken twice.
    expect(await both(insert, ['y', null, 5, 'z'])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    // A parameter of the wrong type in the last row, one parameter too few, then one row computed (the general evaluation).
    expect(await both(insert, ['y', 't', 'five', 'z'])).toMatchObject({ ok: false });
    expect(await both(insert, ['y', 't', 5])).toMatchObject({ ok: false, code: 'INVALID_QUERY' });
    const computed = "INSERT INTO m (note, t) VALUES ($1, $2), ($1 || '!', DEFAULT) RETURNING *";
    expect(await both(computed, ['c', 'u'])).toMatchObject({ ok: false, code: 'CONSTRAINT_VIOLATION' });
    expect(await both(insert, ['w', 'v', 9, 'z'])).toMatchObject({ ok: true, affected: 3 });
    expect(cached.engine.insertCacheStats().hits - hits).toBeGreaterThanOrEqual(5);
    await sameState('m');
  });

  it('writes the same row changes and sequence values to the log (CDC events are made from them)', async () => {
    expect(await logOps(cached)).toEqual(await logOps(fresh));
    expect((await logOps(cached)).length).toBeGreaterThan(20);
  });
  it('a date or time literal is not frozen by the cache (now, today)', async () => {
    await both('CREATE TABLE g (id INTEGER PRIMARY KEY, at TIMESTAMPTZ)');
    const binds = cached.engine.insertCacheStats().binds;
    await cached.q("INSERT INTO g VALUES ($1, 'now')", [1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await cached.q("INSERT INTO g VALUES ($1, 'now')", [2]);
    const rows = (await cached.q('SELECT id, at FROM g ORDER BY id')).rows as { at: string }[];
    expect(rows[0]!.at).not.toBe(rows[1]!.at);
    expect(cached.engine.insertCacheStats().binds).toBe(binds);
  });

  it('a DEFAULT, a CHECK or an array cell holding a date/time literal is read per statement, not frozen by a cache', async () => {
    await both("CREATE TABLE gd (id INTEGER PRIMARY KEY, at TIMESTAMPTZ DEFAULT 'now', moments TIMESTAMPTZ[], CHECK (at <= 'now'))");
    const times = async (): Promise<string[]> => ((await cached.q('SELECT at FROM gd ORDER BY id')).rows as { at: string }[]).map((r) => r.at);
    await cached.q('INSERT INTO gd (id) VALUES ($1)', [1]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await cached.q('INSERT INTO gd (id) VALUES ($1)', [2]);
    const [first, second] = await times();
    expect(first).not.toBe(second);
    // The CHECK's 'now' is the statement's time too: a row stamped later than the first statement passes.
    await cached.q('INSERT INTO gd (id, at) VALUES ($1, $2)', [3, new Date(Date.now() - 5).toISOString()]);
    const stamps: string[] = [];
    for (const id of [4, 5]) {
      await cached.q("INSERT INTO gd (id, at, moments) VALUES ($1, DEFAULT, '{now}')", [id]);
      stamps.push(JSON.stringify((await cached.q('SELECT moments FROM gd WHERE id = $1', [id])).rows[0]));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stamps[0]).not.toBe(stamps[1]);
  });
});
