import { describe, expect, it } from 'vitest';
import type { RowChange } from '../../core/log-records.js';
import type { ByteRange, RowSource } from '../../query/exec/source.js';
import { rowChange } from '../helpers/stack.js';
import {
  collect,
  expectedIndexEntries,
  expectedRows,
  hex,
  itemKey,
  fixturePerTest,
  ownChanges,
  SCORE_INDEX_ID,
  scoreKey,
  TABLE_ID,
  within,
  type Fixture,
} from './fixture.js';

/** A RowSource under test and how to let go of it. */
export interface OpenedSource {
  readonly source: RowSource;
  close(): Promise<void>;
}

/**
 * One RowSource implementation as the shared suite drives it (abstract-level's test suite pattern).
 * `open` returns a source that reads the fixture's committed rows with `own` laid over them: a
 * source with no notion of its own changes commits them first. Only one source is open at a time.
 */
export interface RowSourceFactory {
  readonly name: string;
  /** Reads a snapshot taken at open: commits after it are not seen (false: opening holds the write lock). */
  readonly isolated: boolean;
  open(fixture: Fixture, own: readonly RowChange[]): Promise<OpenedSource>;
}

const pkOf = (row: [string, string]): Uint8Array => Buffer.from(row[0], 'hex');
const asHex = (rows: [Uint8Array, Uint8Array][]): [string, string][] => rows.map(([pk, image]) => [hex(pk), hex(image)]);
const whole = (reverse: boolean): ByteRange => ({ reverse });

/** The RowSource contract (query/exec/source.ts), run against one implementation. */
export function rowSourceSuite(factory: RowSourceFactory): void {
  describe(`RowSource conformance: ${factory.name}`, () => {
    const each = fixturePerTest((fixture, own) => factory.open(fixture, own));
    const open = async (own: readonly RowChange[]): Promise<RowSource> => (await each.open(own)).source;

    it('rows() yields [pk, image] of every row in key order, across batches, and reversed', async () => {
      const source = await open(ownChanges(each.fixture));
      const expected = expectedRows(each.fixture);
      expect(asHex(await collect(source.rows(TABLE_ID, whole(false))))).toEqual(expected);
      expect(asHex(await collect(source.rows(TABLE_ID, whole(true))))).toEqual([...expected].reverse());
    });

    it('rows() honours [gte, lt) on encoded primary keys, with bounds on absent keys and empty ranges', async () => {
      const source = await open(ownChanges(each.fixture));
      const expected = expectedRows(each.fixture);
      const bounds = [
        { gte: itemKey(10n) },
        { lt: itemKey(1_500n) },
        { gte: itemKey(2n), lt: itemKey(1_025n) },
        { gte: itemKey(-100n), lt: itemKey(-4n) },
        { gte: itemKey(500n), lt: itemKey(500n) },
        { gte: itemKey(300_000n) },
      ];
      for (const b of bounds) {
        for (const reverse of [false, true]) {
          const got = asHex(await collect(source.rows(TABLE_ID, { ...b, reverse })));
          expect(got, JSON.stringify({ b: Object.keys(b), reverse })).toEqual(within(expected, pkOf, { ...b, reverse }));
        }
      }
    });

    it('rows() of tables that do not exist yield nothing', async () => {
      const source = await open([]);
      expect(await collect(source.rows(TABLE_ID + 1, whole(false)))).toEqual([]);
      expect(await collect(source.rows(9_999, whole(true)))).toEqual([]);
    });

    it('indexEntries() yields index key then pk, in key order, within bounds, reversed on request', async () => {
      const source = await open(ownChanges(each.fixture));
      const expected = expectedIndexEntries(each.fixture).map(hex);
      const keyOf = (entry: string): Uint8Array => Buffer.from(entry, 'hex');
      const score3 = scoreKey(each.fixture, 3);
      const score4 = scoreKey(each.fixture, 4);
      for (const b of [{}, { gte: score3 }, { lt: score4 }, { gte: score3, lt: score4 }, { gte: scoreKey(each.fixture, 99) }]) {
        for (const reverse of [false, true]) {
          const got = (await collect(source.indexEntries(SCORE_INDEX_ID, { ...b, reverse }))).map(hex);
          expect(got, JSON.stringify({ b: Object.keys(b), reverse })).toEqual(within(expected, keyOf, { ...b, reverse }));
        }
      }
      expect(await collect(source.indexEntries(SCORE_INDEX_ID + 1, whole(false)))).toEqual([]);
    });

    it('getRows() answers positionally: own inserts and updates seen, deletes and absent keys undefined, duplicates repeated', async () => {
      const source = await open(ownChanges(each.fixture));
      const ids = [7n, 2n, -5n, 123_456n, 7n, 1_030n, 200_000n, 0n, 1_024n, 100_000n];
      const got = await source.getRows(TABLE_ID, ids.map(itemKey));
      const expected = new Map(expectedRows(each.fixture));
      expect(got.map((image) => (image ? hex(image) : undefined))).toEqual(ids.map((id) => expected.get(hex(itemKey(id)))));
      expect(await source.getRows(TABLE_ID, [])).toEqual([]);
    });

    it('two scans of one source may be interleaved (a nested-loop join reads the same source twice)', async () => {
      const source = await open(ownChanges(each.fixture));
      const expected = expectedRows(each.fixture);
      const outer = source.rows(TABLE_ID, whole(false))[Symbol.asyncIterator]();
      const inner = source.rows(TABLE_ID, whole(true))[Symbol.asyncIterator]();
      const a: [Uint8Array, Uint8Array][] = [];
      const b: [Uint8Array, Uint8Array][] = [];
      let doneA = false;
      let doneB = false;
      while (!doneA || !doneB) {
        if (!doneA) {
          const next = await outer.next();
          if (next.done) doneA = true;
          else a.push(...next.value);
        }
        if (!doneB) {
          const next = await inner.next();
          if (next.done) doneB = true;
          else b.push(...next.value);
        }
      }
      expect(asHex(a)).toEqual(expected);
      expect(asHex(b)).toEqual([...expected].reverse());
    });

    it('a scan stopped early (LIMIT stops pulling) leaves the source usable', async () => {
      const source = await open(ownChanges(each.fixture));
      for await (const batch of source.rows(TABLE_ID, whole(false))) {
        expect(batch.length).toBeGreaterThan(0);
        break;
      }
      for await (const batch of source.indexEntries(SCORE_INDEX_ID, whole(true))) {
        expect(batch.length).toBeGreaterThan(0);
        break;
      }
      expect(asHex(await collect(source.rows(TABLE_ID, whole(false))))).toEqual(expectedRows(each.fixture));
    });

    it('rowVersion() is stable for a source, and differs (or is null) between sources reading different rows', async () => {
      const first = await open([]);
      const before = first.rowVersion(TABLE_ID);
      expect(first.rowVersion(TABLE_ID)).toBe(before);
      if (before !== null) expect(Number.isInteger(before)).toBe(true);
      const second = await open(ownChanges(each.fixture));
      const after = second.rowVersion(TABLE_ID);
      expect(second.rowVersion(TABLE_ID)).toBe(after);
      if (before !== null && after !== null) expect(after).not.toBe(before);
    });

    it('an optional vectorIndexSize() knows no index that does not exist', async () => {
      const source = await open([]);
      if (source.vectorIndexSize) expect(source.vectorIndexSize(9_999)).toBeUndefined();
    });

    // Registered only where it applies: a skipped test fails CI (test titles without [needs <tool>]).
    if (factory.isolated)
      it('reads its snapshot: commits after it opened are not seen, its own changes still are', async () => {
        const source = await open(ownChanges(each.fixture));
        const expectedBefore = expectedRows(each.fixture);
        const entriesBefore = expectedIndexEntries(each.fixture).map(hex);
        const { table, model } = each.fixture;
        const rowsScan = source.rows(TABLE_ID, whole(false))[Symbol.asyncIterator]();
        const firstBatch = await rowsScan.next();
        // Another writer commits: an insert, an update, a delete of rows the source already has.
        await each.fixture.commit([
          rowChange(table, 'insert', null, { id: 50_000n, name: 'later', score: 5 }),
          rowChange(table, 'update', model.get(1_500n)!, { id: 1_500n, name: 'later', score: 77 }),
          rowChange(table, 'delete', model.get(2_000n)!, null),
        ]);
        const rest: [Uint8Array, Uint8Array][] = [...(firstBatch.done ? [] : firstBatch.value)];
        for (let next = await rowsScan.next(); !next.done; next = await rowsScan.next()) rest.push(...next.value);
        expect(asHex(rest), 'a scan running across the commit').toEqual(expectedBefore);
        expect(asHex(await collect(source.rows(TABLE_ID, whole(false)))), 'a scan started after it').toEqual(expectedBefore);
        expect((await collect(source.indexEntries(SCORE_INDEX_ID, whole(false)))).map(hex)).toEqual(entriesBefore);
        const got = await source.getRows(TABLE_ID, [itemKey(50_000n), itemKey(1_500n), itemKey(2_000n)]);
        const expected = new Map(expectedBefore);
        expect(got.map((image) => (image ? hex(image) : undefined))).toEqual([50_000n, 1_500n, 2_000n].map((id) => expected.get(hex(itemKey(id)))));
      });
  });
}
