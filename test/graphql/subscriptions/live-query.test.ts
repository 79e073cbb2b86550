/**
 * Live queries: the current result at once, a new one after each commit that changes it (driven
 * by the applied LSN and row versions), nothing for commits to other tables, coalesced under a
 * burst, and TABLE_NOT_FOUND then complete when the table is dropped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveQuery } from '../../../protocols/graphql/subscriptions/index.js';
import { startHarness, subscribe, type Harness } from './harness.js';

describe('GraphQL live queries', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it("sends the current result, then each commit's result (one per commit)", async () => {
    await h.sql('CREATE TABLE board (id BIGINT PRIMARY KEY, score INTEGER)');
    await h.sql('INSERT INTO board VALUES (1, 10)');
    const sub = subscribe(h.client(), 'subscription { board }');
    await sub.until((s) => s.results.length === 1);
    expect(sub.results[0].data.board).toEqual([{ id: 1, score: 10 }]);
    for (let i = 2; i <= 6; i++) {
      await h.sql('INSERT INTO board VALUES ($1, $2)', [i, i * 10]);
      // Within one commit: the result after the commit holds it before the next commit is made.
      await sub.until((s) => s.results.length === i);
      expect(sub.results[i - 1].data.board.map((r: { id: number }) => r.id)).toEqual(Array.from({ length: i }, (_, k) => k + 1));
    }
    // A commit to another table and a no-op update change nothing sent.
    await h.sql('CREATE TABLE other (id BIGINT PRIMARY KEY)');
    await h.sql('INSERT INTO other VALUES (1)');
    await h.sql('UPDATE board SET score = score WHERE id = 1');
    await h.sql('UPDATE board SET score = 11 WHERE id = 1');
    await sub.until((s) => s.results.length === 7);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sub.results).toHaveLength(7);
    expect(sub.results[6].data.board[0]).toEqual({ id: 1, score: 11 });
    sub.stop();
  });

  it('coalesces a burst of commits: far fewer evaluations than commits, the last state sent', async () => {
    await h.sql('CREATE TABLE burst (id BIGINT PRIMARY KEY)');
    let evaluations = 0;
    const table = [...h.stack.projections.catalog.tables()].find((t) => t.def.name === 'burst')!.def;
    const stream = liveQuery(h.watch, {
      tables: [table.id],
      evaluate: async () => {
        evaluations++;
        // A slow evaluation: commits pile up meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return (await h.sql('SELECT count(*) AS n FROM burst'))[0]!['n'];
      },
    });
    const seen: unknown[] = [];
    const reading = (async () => {
      for await (const value of stream) {
        seen.push(value);
        if (value === 200) break;
      }
    })();
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 50; i++) await h.sql('INSERT INTO burst VALUES ($1)', [w * 100 + i]);
      }),
    );
    await reading;
    expect(seen.at(-1)).toBe(200);
    expect(evaluations).toBeLessThan(100);
    // Strictly increasing: never an older state after a newer one.
    for (let i = 1; i < seen.length; i++) expect(Number(seen[i]) > Number(seen[i - 1])).toBe(true);
    expect(h.watch.waiting).toBe(0);
  });

  it('a dropped table: TABLE_NOT_FOUND, then complete', async () => {
    await h.sql('CREATE TABLE gone_live (id BIGINT PRIMARY KEY)');
    const sub = subscribe(h.client(), 'subscription { gone_live }');
    await sub.until((s) => s.results.length === 1);
    await h.sql('DROP TABLE gone_live');
    await sub.until((s) => s.completed);
    const last = sub.results.at(-1);
    expect(last.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
    expect(sub.errors).toEqual([]);
  });
});
