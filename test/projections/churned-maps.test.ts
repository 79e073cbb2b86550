import { describe, expect, it } from 'vitest';
import type { TxnRecord } from '../../core/log-records.js';
import type { Lsn } from '../../core/units.js';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import { PendingOverlay } from '../../projections/pending-overlay.js';
import type { KvOp } from '../../projections/state-store.js';
import { RecordHandoff, type PreparedRecord } from '../../projections/record-handoff.js';

/**
 * The record handoff and the pending overlay's key index are Maps every write adds to and deletes
 * from; every PROJECTION_LIMITS.churnedMapRenewDeletes deletes they start over as copies of what
 * they hold (V8 keeps an outgrown Map table linked to its successor, which kept every later value
 * alive through scavenges). Across several renewals, with records in flight over each one, every
 * entry still in flight is found and every one taken or released is gone.
 */
describe('maps renewed under churn keep what is in flight', () => {
  const renewals = 3;
  const total = PROJECTION_LIMITS.churnedMapRenewDeletes * renewals + 17;
  const inFlight = 50;

  it('RecordHandoff: take() and takeRowsOnly() find each record once, in flight across renewals', () => {
    const handoff = new RecordHandoff();
    const prepared = (n: number): PreparedRecord => ({ record: { txnId: `r${n}` } as TxnRecord, effects: { ops: [], deltas: new Map(), sequences: [] } });
    const given = new Map<number, PreparedRecord>();
    for (let n = 1; n <= total + inFlight; n++) {
      if (n <= total) {
        const p = prepared(n);
        given.set(n, p);
        handoff.put(n as Lsn, p);
      }
      const done = n - inFlight;
      if (done < 1) continue;
      // The vector projection and the tables projection each take the record once; a second take finds nothing.
      expect(handoff.takeRowsOnly(done as Lsn)).toBe(true);
      expect(handoff.takeRowsOnly(done as Lsn)).toBe(false);
      expect(handoff.take(done as Lsn)).toBe(given.get(done));
      expect(handoff.take(done as Lsn)).toBeUndefined();
      // Records still in flight are all there (checked around each renewal).
      if (done % PROJECTION_LIMITS.churnedMapRenewDeletes < 3) {
        for (let k = done + 1; k <= Math.min(n, total); k++) {
          const p = handoff.take(k as Lsn);
          expect(p).toBe(given.get(k));
          handoff.put(k as Lsn, p!);
        }
      }
    }
  });

  it('PendingOverlay: get() answers each pending key and none released, across renewals of its index', () => {
    const overlay = new PendingOverlay();
    const key = (n: number): Uint8Array => Uint8Array.of(1, 0, 0, 7, n >> 16, (n >> 8) & 255, n & 255);
    // Record n puts key n; every 100th also deletes key n - 1 (its newest entry then, outliving record n - 1's release).
    const deletedBy = (k: number, newest: number): boolean => (k + 1) % 100 === 0 && k + 1 <= newest;
    for (let n = 1; n <= total; n++) {
      const ops: KvOp[] = [{ type: 'put', key: key(n), value: Uint8Array.of(n & 255) }];
      if (n % 100 === 0) ops.push({ type: 'del', key: key(n - 1) });
      overlay.add(n as Lsn, ops);
      const applied = n - inFlight;
      if (applied < 1) continue;
      overlay.release(applied as Lsn);
      if (n % 97 === 0 || applied % PROJECTION_LIMITS.churnedMapRenewDeletes < 2) {
        const released = overlay.get(key(applied));
        if (deletedBy(applied, n)) expect(released?.value).toBeNull();
        else expect(released).toBeUndefined();
        for (let k = applied + 1; k <= n; k++) {
          const entry = overlay.get(key(k));
          if (deletedBy(k, n)) expect(entry?.value).toBeNull();
          else expect(entry?.value).toStrictEqual(Uint8Array.of(k & 255));
        }
      }
    }
    overlay.release(Number.MAX_SAFE_INTEGER as Lsn);
    expect(overlay.size).toBe(0);
    expect(overlay.get(key(total))).toBeUndefined();
  });
});
