import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Lsn } from '../../core/units.js';
import { PendingOverlay } from '../../projections/pending-overlay.js';
import type { KvOp } from '../../projections/state-store.js';

/** A small key space, so records in flight often touch the same keys. */
const keyArb = fc.integer({ min: 0, max: 7 }).map((n) => Uint8Array.of(1, 0, n % 3, n));
const opArb: fc.Arbitrary<KvOp> = fc.oneof(
  fc.record({ type: fc.constant('put' as const), key: keyArb, value: fc.uint8Array({ minLength: 1, maxLength: 3 }) }),
  fc.record({ type: fc.constant('del' as const), key: keyArb }),
);
/** add(ops) of the next LSN, or release up to a number of LSNs back from the newest. */
const stepArb = fc.oneof(
  fc.record({ kind: fc.constant('add' as const), ops: fc.array(opArb, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('release' as const), back: fc.integer({ min: 0, max: 4 }) }),
);

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('PendingOverlay', () => {
  // 64: every record indexed by key; 2 and 0: records over that many entries binary-searched (as a bulk insert's are).
  it.each([64, 2, 0])(
    'get() answers the newest pending op of a key, as a scan of the unreleased records would, through adds and releases (indexed up to %i entries)',
    (indexedMax) => {
      fc.assert(
        fc.property(fc.array(stepArb, { maxLength: 40 }), (steps) => {
          const overlay = new PendingOverlay(indexedMax);
          // The model: every record's ops in LSN order; released ones dropped.
          let model: { lsn: number; ops: KvOp[] }[] = [];
          let lsn = 0;
          for (const step of steps) {
            if (step.kind === 'add') {
              lsn += 1;
              overlay.add(lsn as Lsn, step.ops);
              model.push({ lsn, ops: step.ops });
            } else {
              const applied = Math.max(0, lsn - step.back);
              overlay.release(applied as Lsn);
              model = model.filter((r) => r.lsn > applied);
            }
            for (let n = 0; n < 8; n++) {
              const key = Uint8Array.of(1, 0, n % 3, n);
              let expected: { value: string | null; lsn: number } | undefined;
              for (const record of model)
                for (const op of record.ops) if (hex(op.key) === hex(key)) expected = { value: op.type === 'put' ? hex(op.value) : null, lsn: record.lsn };
              const entry = overlay.get(key);
              expect(entry && { value: entry.value === null ? null : hex(entry.value), lsn: entry.lsn }).toEqual(expected);
            }
            // range(): the newest op of every key in [gte, lt), in key order (a record that came sorted keeps its ops).
            const gte = Uint8Array.of(1, 0, 1);
            const lt = Uint8Array.of(1, 0, 2, 5);
            const newest = new Map<string, { key: string; value: string | null; lsn: number }>();
            for (const record of model)
              for (const op of record.ops) newest.set(hex(op.key), { key: hex(op.key), value: op.type === 'put' ? hex(op.value) : null, lsn: record.lsn });
            const inRange = [...newest.values()].filter((e) => e.key >= hex(gte) && e.key < hex(lt)).sort((a, b) => (a.key < b.key ? -1 : 1));
            expect(overlay.range(gte, lt).map((e) => ({ key: hex(e.key), value: e.value === null ? null : hex(e.value), lsn: e.lsn }))).toEqual(inRange);
            expect(overlay.size).toBe(model.reduce((sum, r) => sum + new Set(r.ops.map((op) => hex(op.key))).size, 0));
          }
        }),
        { numRuns: 300 },
      );
    },
  );

  // Keys are made into map strings one char per byte (core/key-text.ts): directly up to 32 bytes,
  // through a latin1 decode past it. Either way a key must find what was added under the same
  // bytes, whatever buffer or offset the bytes sit in, bytes past 0x7f included.
  it('finds keys of every length and byte, given as views at any offset, and forgets them on release', () => {
    const overlay = new PendingOverlay();
    const lengths = [1, 2, 31, 32, 33, 63, 64, 65, 200];
    const keyOf = (length: number, salt: number): Uint8Array => Uint8Array.from({ length }, (_v, i) => (i * 37 + salt * 101 + 0x80) & 0xff);
    const view = (bytes: Uint8Array): Uint8Array => {
      const holder = new Uint8Array(bytes.length + 7);
      holder.set(bytes, 5);
      return holder.subarray(5, 5 + bytes.length);
    };
    let lsn = 0;
    for (const length of lengths) {
      for (const salt of [0, 1]) overlay.add(++lsn as Lsn, [{ type: 'put', key: keyOf(length, salt), value: Uint8Array.of(length, salt) }]);
    }
    for (const length of lengths) {
      for (const salt of [0, 1]) {
        const found = overlay.get(view(keyOf(length, salt)));
        expect(found?.value && [...found.value], `${length}/${salt}`).toEqual([length, salt]);
      }
      expect(overlay.get(view(keyOf(length, 2)))).toBeUndefined();
    }
    overlay.release(lsn as Lsn);
    for (const length of lengths) expect(overlay.get(keyOf(length, 0))).toBeUndefined();
    expect(overlay.size).toBe(0);
  });
});
