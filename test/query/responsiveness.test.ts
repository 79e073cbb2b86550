import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * Queries over rows in memory never wait for I/O; they must still give the event loop its turns
 * (exec/context.ts shouldYield/yieldNow), or one long query would hold every other request and
 * never notice an abort. Order of completion, not time, is asserted.
 */
describe('long in-memory queries let others run', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE big (id INTEGER PRIMARY KEY, g INTEGER)');
    for (let start = 0; start < 60_000; start += 10_000) await h.q(`INSERT INTO big SELECT s, s % 97 FROM generate_series(${start}, ${start + 9_999}) AS s`);
    await h.q('SELECT count(*) FROM big'); // fills the scan cache: later scans read memory only
  });
  afterAll(async () => {
    await h.close();
  });

  const finishesBefore = async (long: string): Promise<string[]> => {
    const order: string[] = [];
    const slow = h.q(long).then(() => order.push('long'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const quick = h.q('SELECT 1 AS one').then(() => order.push('quick'));
    await Promise.all([slow, quick]);
    return order;
  };

  it('a short query finishes while a large generate_series runs', async () => {
    expect(await finishesBefore('SELECT count(*) FROM generate_series(1, 4000000) AS s')).toEqual(['quick', 'long']);
  });

  it('a short query finishes while a hash join over cached tables runs', async () => {
    expect(await finishesBefore('SELECT count(*) FROM big a JOIN big b ON a.g = b.g WHERE a.id < 3000')).toEqual(['quick', 'long']);
  });

  it('an abort stops a long in-memory query', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    const error = await caught(
      h.engine.execute('SELECT count(*) FROM generate_series(1, 500000000) AS s', {
        timeoutMs: 600_000,
        maxRows: 10,
        tenant: 'default',
        signal: controller.signal,
      }),
    );
    expect(error.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(60_000); // the full series would take minutes
  });
});
