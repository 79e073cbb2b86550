import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rowKey, rowKeys, writeRowKey } from '../../projections/keys.js';

describe('row keys written into one buffer (rowKeys, writeRowKey)', () => {
  it('each is rowKey of its primary key, short keys and long ones, at any offset of a larger buffer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.array(fc.uint8Array({ maxLength: 80 }), { maxLength: 40 }), (tableId, pks) => {
        const keys = rowKeys(tableId, pks);
        keys.forEach((key, i) => expect([...key]).toEqual([...rowKey(tableId, pks[i]!)]));
        // A slab that is itself a view at an offset of a larger buffer.
        const outer = new Uint8Array(7 + pks.reduce((n, pk) => n + 5 + pk.length, 0)).fill(0xee);
        const slab = outer.subarray(7);
        let at = 0;
        const written = pks.map((pk) => {
          const key = writeRowKey(slab, at, tableId, pk);
          at += key.length;
          return key;
        });
        written.forEach((key, i) => expect([...key]).toEqual([...rowKey(tableId, pks[i]!)]));
        expect([...outer.subarray(0, 7)]).toEqual(new Array(7).fill(0xee));
      }),
    );
  });
});
