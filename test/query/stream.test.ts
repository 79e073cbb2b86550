import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectRows, DEFAULT_SQL_LIMITS, type JsonRow, type ResultSummary, type RowStream } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

/** SqlEngine.stream: rows in batches as the caller pulls them, stopping when it leaves the loop, on abort or deadline. */
describe('SqlEngine.stream', () => {
  let h: SqlHarness;
  const opts = (batchRows: number, extra: Record<string, unknown> = {}) => ({ timeoutMs: 30_000, tenant: 'default', batchRows, ...extra });
  /** Pulls every batch, awaiting `onBatch` between pulls (a slow consumer); a false from it leaves the loop. */
  const drain = async (stream: RowStream, onBatch: (rows: JsonRow[]) => unknown): Promise<ResultSummary> => {
    for await (const rows of stream) if ((await onBatch(rows)) === false) break;
    return stream.summary();
  };

  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE s (i INTEGER PRIMARY KEY, t TEXT)');
    await h.q("INSERT INTO s SELECT g, 'r' || g FROM generate_series(1, 2500) g");
  });
  afterAll(async () => h.close());

  it('hands a SELECT over in batches of batchRows, in order, with the result metadata', async () => {
    const sizes: number[] = [];
    const seen: unknown[] = [];
    const stream = await h.engine.stream('SELECT i, t FROM s WHERE i > $1 ORDER BY i', { ...opts(1000), params: [100] });
    // The columns are known before the first row is pulled.
    expect(stream.columns).toEqual([
      { name: 'i', type: 'INTEGER', nullable: false },
      { name: 't', type: 'TEXT', nullable: true },
    ]);
    const result = await drain(stream, async (rows) => {
      sizes.push(rows.length);
      seen.push(...rows.map((r) => r.i));
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(sizes).toEqual([1000, 1000, 400]);
    expect(seen[0]).toBe(101);
    expect(seen.at(-1)).toBe(2500);
    expect(result).toMatchObject({ command: 'SELECT', rowCount: 2400, truncated: false, affectedRows: null });
    expect(result.columns).toEqual([
      { name: 'i', type: 'INTEGER', nullable: false },
      { name: 't', type: 'TEXT', nullable: true },
    ]);
  });

  it('is not capped by resultRowsMax (the harness default is 100000; the stream goes past a small cap)', async () => {
    const small = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, resultRowsMax: 10 } });
    try {
      let n = 0;
      await drain(await small.engine.stream('SELECT g FROM generate_series(1, 500) g', opts(7)), (rows) => {
        n += rows.length;
      });
      expect(n).toBe(500);
    } finally {
      await small.close();
    }
  });

  it('stops pulling when the consumer leaves the loop, and says rows were left', async () => {
    let calls = 0;
    const result = await drain(await h.engine.stream('SELECT i FROM s', opts(100)), () => ++calls < 3);
    expect(calls).toBe(3);
    expect(result).toMatchObject({ truncated: true, rowCount: 300 });
    const last = await drain(await h.engine.stream('SELECT i FROM s WHERE i <= 100', opts(100)), () => false);
    expect(last.truncated).toBe(false);
  });

  it('stops with QUERY_TIMEOUT when aborted or past its deadline while the consumer is slow', async () => {
    const abort = new AbortController();
    const aborted = await caught(drain(await h.engine.stream('SELECT i FROM s', opts(10, { signal: abort.signal })), () => abort.abort()));
    expect(aborted).toMatchObject({ code: 'QUERY_TIMEOUT', details: { reason: 'cancelled' } });
    const slow = await h.engine.stream('SELECT i FROM s', opts(10, { timeoutMs: 50 }));
    const late = await caught(drain(slow, () => new Promise((resolve) => setTimeout(resolve, 60))));
    expect(late).toMatchObject({ code: 'QUERY_TIMEOUT', details: { reason: 'timeout' } });
  });

  it('runs other statements as execute does and hands their rows over in batches', async () => {
    const batches: number[] = [];
    const result = await drain(await h.engine.stream("INSERT INTO s SELECT g, 'x' FROM generate_series(3001, 3005) g RETURNING i", opts(2)), (rows) => {
      batches.push(rows.length);
    });
    expect(batches).toEqual([2, 2, 1]);
    expect(result).toMatchObject({ command: 'INSERT', affectedRows: 5 });
    const none: number[] = [];
    const ddl = await drain(await h.engine.stream('CREATE TABLE s2 (x INT)', opts(2)), (rows) => {
      none.push(rows.length);
    });
    expect(none).toEqual([]);
    expect(ddl.command).toBe('CREATE TABLE');
  });

  it('reports errors before any row as the engine does: stream() itself rejects', async () => {
    expect((await caught(h.engine.stream('SELECT nope FROM s', opts(10)))).code).toBe('COLUMN_NOT_FOUND');
    expect((await caught(h.engine.stream('SELEC 1', opts(10)))).code).toBe('INVALID_QUERY');
  });

  it('is what execute() collects: max rows exactly is whole, one row more is truncated', async () => {
    const at = (maxRows: number) => h.engine.execute('SELECT i FROM s WHERE i <= 100 ORDER BY i', { timeoutMs: 30_000, tenant: 'default', maxRows });
    expect(await at(100)).toMatchObject({ rowCount: 100, truncated: false });
    const cut = await at(99);
    expect(cut).toMatchObject({ rowCount: 99, truncated: true });
    expect(cut.rows.at(-1)).toEqual({ i: 99 });
    // collectRows over a stream of small batches keeps the same rule.
    expect(await collectRows(await h.engine.stream('SELECT i FROM s WHERE i <= 100', opts(7)), 100)).toMatchObject({ rowCount: 100, truncated: false });
    expect(await collectRows(await h.engine.stream('SELECT i FROM s WHERE i <= 100', opts(7)), 98)).toMatchObject({ rowCount: 98, truncated: true });
    expect(await collectRows(await h.engine.stream('SELECT i FROM s WHERE i <= 100', opts(10)), 50)).toMatchObject({ rowCount: 50, truncated: true });
  });
});
