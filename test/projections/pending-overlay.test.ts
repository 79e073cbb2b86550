import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../core/key-encoding.js';
import { lsn } from '../../core/units.js';
import { PendingOverlay } from '../../projections/index.js';
import type { KvOp } from '../../projections/state-store.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

/** Ops over a small key space (so keys repeat), each put with a value naming its position. */
const opsArb = fc.array(
  fc.record({ key: fc.uint8Array({ minLength: 0, maxLength: 3, max: 3 }), put: fc.boolean() }).map(({ key, put }) => ({ key, put })),
  { maxLength: 40 },
);

function toOps(raw: readonly { key: Uint8Array; put: boolean }[], record: number, sortKeys: boolean): KvOp[] {
  let list = raw.map(({ key, put }, i): KvOp => (put ? { type: 'put', key, value: Uint8Array.from([record, i]) } : { type: 'del', key }));
  // Sorted and without repeats: the path that keeps the ops as they come.
  if (sortKeys) {
    const seen = new Set<string>();
    list = list.filter((op) => !seen.has(hex(op.key)) && seen.add(hex(op.key))).sort((a, b) => compareKeys(a.key, b.key));
  }
  return list;
}

describe('pending overlay: sorted and unsorted records give what the ops say (the last op on a key wins, newest record first)', () => {
  it('get and range match a model, before and after release', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(opsArb, fc.boolean()), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 4 }), (records, releaseUpTo) => {
        const overlay = new PendingOverlay();
        const model = new Map<string, { key: Uint8Array; value: string | null; lsn: number }>();
        const keysSeen = new Map<string, Uint8Array>();
        const perRecord: Map<string, { value: string | null }>[] = [];
        records.forEach(([raw, sortKeys], r) => {
          const ops = toOps(raw, r, sortKeys);
          overlay.add(lsn(r + 1), ops);
          const own = new Map<string, { value: string | null }>();
          for (const op of ops) {
            keysSeen.set(hex(op.key), op.key);
            own.set(hex(op.key), { value: op.type === 'put' ? hex(op.value) : null });
          }
          perRecord.push(own);
        });
        const check = (fromRecord: number): void => {
          model.clear();
          perRecord.forEach((own, r) => {
            if (r < fromRecord) return;
            for (const [k, v] of own) model.set(k, { key: keysSeen.get(k)!, value: v.value, lsn: r + 1 });
          });
          for (const [k, key] of keysSeen) {
            const got = overlay.get(key);
            const want = model.get(k);
            expect(got && { key: hex(got.key), value: got.value && hex(got.value), lsn: Number(got.lsn) }).toEqual(
              want && { key: k, value: want.value, lsn: want.lsn },
            );
          }
          const all = overlay.range(new Uint8Array(0), Uint8Array.from([255]));
          const expected = [...model.values()].sort((a, b) => compareKeys(a.key, b.key));
          expect(all.map((e) => [hex(e.key), e.value && hex(e.value), Number(e.lsn)])).toEqual(expected.map((e) => [hex(e.key), e.value, e.lsn]));
          expect(overlay.size).toBe(perRecord.slice(fromRecord).reduce((n, own) => n + own.size, 0));
        };
        check(0);
        overlay.release(lsn(releaseUpTo));
        check(Math.min(releaseUpTo, records.length));
      }),
      { numRuns: 300 },
    );
  });
});
