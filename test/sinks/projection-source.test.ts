import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectionEventSource } from '../../sinks/index.js';
import { openSql, type SqlHarness } from '../query/helpers.js';

/**
 * The change-event source's wait for the tables projection (sinks/events/projection-source.ts):
 * a capture waits there for the record it starts at, often one not written yet, and a stream that
 * stops (or restarts) while waiting aborts the wait. An aborted wait must leave no waiter in the
 * tracker: each one left would stay until that LSN is applied, one more per stop.
 */
describe('projection event source: waiting for the tables projection', () => {
  let h: SqlHarness;

  beforeAll(async () => {
    h = await openSql();
    await h.q('CREATE TABLE w (id INT PRIMARY KEY)');
  });
  afterAll(async () => {
    await h?.close();
  });

  /** 'applied' when the wait resolves, else its error's message. */
  const outcome = async (p: Promise<void>): Promise<string> => {
    try {
      await p;
    } catch (error) {
      return (error as Error).message;
    }
    return 'applied';
  };

  it('waits aborted before or during the wait reject and leave no waiter behind', async () => {
    const tracker = h.stack.projections.tablesApplied;
    const source = projectionEventSource(h.stack.projections);
    const before = tracker.waiting;
    const ahead = tracker.lsn + 1000; // not written yet: nothing applies it during the test

    const during = Array.from({ length: 300 }, () => {
      const stop = new AbortController();
      const wait = outcome(source.waitTablesApplied(ahead, stop.signal));
      return { stop, wait };
    });
    expect(tracker.waiting).toBe(before + 300);
    for (const { stop } of during) stop.abort();
    for (const { wait } of during) expect(await wait).toBe('stopped while waiting for the tables projection');

    const stopped = AbortSignal.abort();
    for (let i = 0; i < 300; i++) expect(await outcome(source.waitTablesApplied(ahead, stopped))).toBe('stopped while waiting for the tables projection');

    expect(tracker.waiting).toBe(before);
  });

  it('a wait for the next record resolves once it is applied, and leaves no waiter', async () => {
    const tracker = h.stack.projections.tablesApplied;
    const source = projectionEventSource(h.stack.projections);
    const before = tracker.waiting;
    const stop = new AbortController();
    const wait = outcome(source.waitTablesApplied(tracker.lsn + 1, stop.signal));
    await h.q('INSERT INTO w VALUES (1)');
    expect(await wait).toBe('applied');
    stop.abort();
    expect(tracker.waiting).toBe(before);
    // A stopped stream stops, even where the LSN is applied.
    expect(await outcome(source.waitTablesApplied(1, stop.signal))).toBe('stopped while waiting for the tables projection');
  });
});
