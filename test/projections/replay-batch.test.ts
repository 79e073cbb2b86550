/**
 * Replay workers build each chunk's sorted WriteBatch as they write its ops, grouped by key prefix
 * (projections/replay-batch.ts). It must be byte for byte the batch sortedBatch makes from the
 * same ops packed in log order (replay-sort.ts: sorted by key, the last op of each key), whatever
 * the mix of prefixes, orders, repeated keys and keys shorter than a prefix.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BatchBuilder } from '../../projections/replay-batch.js';
import { sortedBatch } from '../../projections/replay-sort.js';
import { PACKED_DEL, PACKED_PUT } from '../../projections/state-store.js';

interface Op {
  readonly key: Uint8Array;
  readonly value: Uint8Array | null;
  /** Given through keyOp (space, id, first, second) rather than op(key). */
  readonly split: number | null;
}

function pack(ops: readonly Op[]): Uint8Array {
  const parts: number[] = [];
  const u32 = (n: number) => parts.push(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  for (const { key, value } of ops) {
    parts.push(value === null ? PACKED_DEL : PACKED_PUT);
    u32(key.length);
    parts.push(...key);
    if (value !== null) {
      u32(value.length);
      parts.push(...value);
    }
  }
  return Uint8Array.from(parts);
}

function built(ops: readonly Op[], hint: number): { rep: Buffer; count: number } {
  const builder = new BatchBuilder(hint);
  for (const { key, value, split } of ops) {
    if (split === null || key.length < 5) builder.op(key, value);
    else {
      const id = ((key[1]! << 24) | (key[2]! << 16) | (key[3]! << 8) | key[4]!) >>> 0;
      const at = 5 + Math.min(split, key.length - 5);
      builder.keyOp(key[0]!, id, key, 5, at - 5, key, at, key.length - at, value, 0, value === null ? 0 : value.length);
    }
  }
  const batch = builder.finish();
  return { rep: Buffer.from(batch.rep.subarray(0, batch.end)), count: batch.count };
}

// Row- and index-like keys: a few prefixes (space, u32 id with high bytes set), then bytes from a small
// alphabet (long shared prefixes, repeats); sometimes a key shorter than a prefix.
const keyArb = fc.oneof(
  {
    weight: 20,
    arbitrary: fc
      .tuple(fc.constantFrom(0x10, 0x11, 0x02), fc.constantFrom(0, 1, 0x80000001), fc.uint8Array({ minLength: 0, maxLength: 20 }))
      .map(([space, id, rest]) => Uint8Array.from([space, id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff, ...rest.map((b) => b % 3)])),
  },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 0, maxLength: 4 }).map((bytes) => bytes.map((b) => (b % 2) + 0x10)) },
);
const opArb = fc.record({
  key: keyArb,
  value: fc.option(fc.uint8Array({ maxLength: 300 }), { nil: null, freq: 4 }),
  split: fc.option(fc.integer({ min: 0, max: 20 }), { nil: null }),
});

describe('BatchBuilder', () => {
  it('builds the batch sortedBatch makes from the same ops in log order', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 300 }), fc.constantFrom(0, 100, 1 << 20), (ops, hint) => {
        const expected = sortedBatch(pack(ops));
        const actual = built(ops, hint);
        expect(actual.count).toBe(expected.count);
        expect(actual.rep.equals(Buffer.from(expected.rep.subarray(0, expected.end)))).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('copies a group written in key order whole, and sorts one that is not (many entries, buffers grown)', () => {
    const ops: Op[] = [];
    const key = (space: number, n: number) => Uint8Array.from([space, 0, 0, 0, 1, n >>> 16, (n >>> 8) & 0xff, n & 0xff]);
    for (let n = 0; n < 5000; n++) {
      ops.push({ key: key(0x10, n), value: Uint8Array.of(n & 0xff), split: 1 });
      // Index-like: keys out of order, each twice (the second op wins).
      ops.push({ key: key(0x11, (n * 7919) % 5000), value: new Uint8Array(0), split: 2 });
      if (n % 3 === 0) ops.push({ key: key(0x11, (n * 7919) % 5000), value: null, split: 0 });
    }
    const expected = sortedBatch(pack(ops));
    const actual = built(ops, 0);
    expect(actual.count).toBe(expected.count);
    expect(actual.rep.equals(Buffer.from(expected.rep.subarray(0, expected.end)))).toBe(true);
  });
});
