/**
 * Replay sorts each chunk's key/value ops by key and keeps the last op of each key
 * (projections/replay-sort.ts): applied in order, the result must leave exactly the state the
 * ops in log order leave.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BATCH_TAIL_BYTES, packedFromBatch, sortedBatch, sortPackedOps } from '../../projections/replay-sort.js';
import { forEachPackedOp, PACKED_DEL, PACKED_PUT } from '../../projections/state-store.js';

function pack(ops: readonly { key: Uint8Array; value: Uint8Array | null }[]): Uint8Array {
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

function applied(ops: Uint8Array): { state: Map<string, string | null>; keys: string[] } {
  const state = new Map<string, string | null>();
  const keys: string[] = [];
  forEachPackedOp(
    ops,
    (key, value) => {
      keys.push(Buffer.from(key).toString('hex'));
      state.set(Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex'));
    },
    (key) => {
      keys.push(Buffer.from(key).toString('hex'));
      state.set(Buffer.from(key).toString('hex'), null);
    },
  );
  return { state, keys };
}

// Keys share long prefixes and differ late or in length, as row and index keys do.
const keyArb = fc
  .tuple(fc.constantFrom(0x10, 0x11), fc.integer({ min: 0, max: 2 }), fc.uint8Array({ minLength: 0, maxLength: 16 }))
  .map(([space, id, rest]) => Uint8Array.from([space, 0, 0, 0, id, ...rest.map((b) => b % 3)]));
const opArb = fc.record({ key: keyArb, value: fc.option(fc.uint8Array({ maxLength: 80 }), { nil: null }) });

describe('sortPackedOps', () => {
  it('sorts by key, keeps one op per key (the last), and leaves the same state', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const packed = pack(ops);
        const sorted = sortPackedOps(packed);
        const before = applied(packed);
        const after = applied(sorted);
        expect(after.state).toEqual(before.state);
        const ordered = after.keys.map((hex) => Buffer.from(hex, 'hex'));
        for (let i = 1; i < ordered.length; i++) expect(Buffer.compare(ordered[i - 1]!, ordered[i]!)).toBe(-1);
        expect(after.keys.length).toBe(before.state.size);
      }),
      { numRuns: 500 },
    );
  });

  it('sortedBatch writes the same ops as a LevelDB WriteBatch (tags, varint lengths, the count)', () => {
    // Values past 127 and 16,383 bytes: one-, two- and three-byte varint lengths.
    const sizedOpArb = fc.record({ key: keyArb, value: fc.option(fc.uint8Array({ maxLength: 20_000 }), { nil: null }) });
    fc.assert(
      fc.property(fc.array(fc.oneof(opArb, sizedOpArb), { maxLength: 60 }), (ops) => {
        const packed = pack(ops);
        const batch = sortedBatch(packed);
        expect(Buffer.from(packedFromBatch(batch)).equals(Buffer.from(sortPackedOps(packed)))).toBe(true);
        const view = new DataView(batch.rep.buffer, batch.rep.byteOffset);
        expect(view.getUint32(8, true)).toBe(batch.count);
        expect(batch.count).toBe(applied(sortPackedOps(packed)).keys.length);
        // Room for the bulk loader's probe after the entries.
        expect(batch.rep.length - batch.end).toBeGreaterThanOrEqual(BATCH_TAIL_BYTES);
      }),
      { numRuns: 200 },
    );
  });
});
