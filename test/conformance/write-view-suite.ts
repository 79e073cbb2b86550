import { describe, expect, it } from 'vitest';
import type { RowChange } from '../../core/log-records.js';
import type { WriteView } from '../../projections/index.js';
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
  SEQUENCE_NAME,
  SEQUENCE_VALUE,
  TABLE_ID,
  within,
  type Fixture,
} from './fixture.js';

/** A WriteView under test and how to let go of it (a view is valid only while its builder runs). */
export interface OpenedView {
  readonly view: WriteView;
  close(): Promise<void>;
}

/**
 * One WriteView implementation as the shared suite drives it. `open` returns a view of the
 * fixture's committed rows with `own` laid over them (committed first where the view has no own
 * changes). Only one view is open at a time: it holds the write lock.
 */
export interface WriteViewFactory {
  readonly name: string;
  open(fixture: Fixture, own: readonly RowChange[]): Promise<OpenedView>;
}

const pkOf = (row: [string, string]): Uint8Array => Buffer.from(row[0], 'hex');
const asHex = (rows: [Uint8Array, Uint8Array][]): [string, string][] => rows.map(([pk, image]) => [hex(pk), hex(image)]);
const imageHex = (image: Uint8Array | undefined): string | undefined => (image ? hex(image) : undefined);

/** The WriteView contract (projections/sequencer.ts), run against one implementation. */
export function writeViewSuite(factory: WriteViewFactory): void {
  describe(`WriteView conformance: ${factory.name}`, () => {
    const each = fixturePerTest((fixture, own) => factory.open(fixture, own));
    const open = async (own: readonly RowChange[]): Promise<WriteView> => (await each.open(own)).view;

    it('catalog holds the committed tables', async () => {
      const view = await open([]);
      expect(view.catalog.table(TABLE_ID)?.def.name).toBe('items');
      expect(view.catalog.table(9_999)).toBeUndefined();
    });

    it('getRow() and getRows() give current images: own inserts and updates seen, deletes and absent keys undefined', async () => {
      const view = await open(ownChanges(each.fixture));
      const expected = new Map(expectedRows(each.fixture));
      const ids = [7n, 2n, -5n, 123_456n, 7n, 1_030n, 200_000n, 0n, 1_024n, 100_000n, 26n];
      const want = ids.map((id) => expected.get(hex(itemKey(id))));
      expect((await view.getRows(TABLE_ID, ids.map(itemKey))).map(imageHex)).toEqual(want);
      const single = await Promise.all(ids.map((id) => view.getRow(TABLE_ID, itemKey(id))));
      expect(single.map(imageHex)).toEqual(want);
      expect(await view.getRows(TABLE_ID, [])).toEqual([]);
      expect(await view.getRow(9_999, itemKey(1n))).toBeUndefined();
    });

    it('rows() yields [pk, image] in key order across batches, within [gte, lt), reversed on request', async () => {
      const view = await open(ownChanges(each.fixture));
      const expected = expectedRows(each.fixture);
      expect(asHex(await collect(view.rows(TABLE_ID)))).toEqual(expected);
      const bounds = [{}, { gte: itemKey(10n) }, { lt: itemKey(1_500n) }, { gte: itemKey(2n), lt: itemKey(1_025n) }, { gte: itemKey(500n), lt: itemKey(500n) }];
      for (const b of bounds) {
        for (const reverse of [false, true]) {
          const got = asHex(await collect(view.rows(TABLE_ID, { ...b, reverse })));
          expect(got, JSON.stringify({ b: Object.keys(b), reverse })).toEqual(within(expected, pkOf, { ...b, reverse }));
        }
      }
      expect(await collect(view.rows(9_999))).toEqual([]);
    });

    it('indexEntries() yields what follows a prefix: with a whole index key, the primary keys in order', async () => {
      const view = await open(ownChanges(each.fixture));
      const entries = expectedIndexEntries(each.fixture);
      expect((await collect(view.indexEntries(SCORE_INDEX_ID))).map(hex)).toEqual(entries.map(hex));
      for (const score of [0, 3, 99, 12_345, null]) {
        const prefix = scoreKey(each.fixture, score);
        const pks = [...each.fixture.model.values()]
          .filter((row) => row.score === score)
          .map((row) => row.id)
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const got = await collect(view.indexEntries(SCORE_INDEX_ID, prefix));
        expect(got.map(hex), `score ${score}`).toEqual(pks.map((id) => hex(itemKey(id))));
      }
      expect(await collect(view.indexEntries(SCORE_INDEX_ID + 1))).toEqual([]);
    });

    it('indexRange() yields index key then pk within [gte, lt), reversed on request', async () => {
      const view = await open(ownChanges(each.fixture));
      const expected = expectedIndexEntries(each.fixture).map(hex);
      const keyOf = (entry: string): Uint8Array => Buffer.from(entry, 'hex');
      const score3 = scoreKey(each.fixture, 3);
      const score4 = scoreKey(each.fixture, 4);
      for (const b of [{}, { gte: score3 }, { lt: score4 }, { gte: score3, lt: score4 }, { gte: scoreKey(each.fixture, 99) }]) {
        for (const reverse of [false, true]) {
          const got = (await collect(view.indexRange(SCORE_INDEX_ID, { ...b, reverse }))).map(hex);
          expect(got, JSON.stringify({ b: Object.keys(b), reverse })).toEqual(within(expected, keyOf, { ...b, reverse }));
        }
      }
    });

    it('a scan stopped early leaves the view usable, and scans may interleave', async () => {
      const view = await open(ownChanges(each.fixture));
      for await (const batch of view.rows(TABLE_ID)) {
        expect(batch.length).toBeGreaterThan(0);
        break;
      }
      const forward = view.rows(TABLE_ID)[Symbol.asyncIterator]();
      const backward = view.indexRange(SCORE_INDEX_ID, { reverse: true })[Symbol.asyncIterator]();
      const rows: [Uint8Array, Uint8Array][] = [];
      const entries: Uint8Array[] = [];
      for (let a = await forward.next(), b = await backward.next(); !a.done || !b.done;) {
        if (!a.done) {
          rows.push(...a.value);
          a = await forward.next();
        }
        if (!b.done) {
          entries.push(...b.value);
          b = await backward.next();
        }
      }
      expect(asHex(rows)).toEqual(expectedRows(each.fixture));
      expect(entries.map(hex)).toEqual(expectedIndexEntries(each.fixture).map(hex).reverse());
    });

    it('sequence() gives the last value of a sequence, undefined for one that does not exist', async () => {
      const view = await open(ownChanges(each.fixture));
      expect(view.sequence(SEQUENCE_NAME)).toBe(SEQUENCE_VALUE);
      expect(view.sequence('no_such_seq')).toBeUndefined();
    });
  });
}
