import { describe, expect, it } from 'vitest';
import { lsn } from '../../core/units.js';
import { ReadSet } from '../../query/txn/read-set.js';
import { pointSpan, RecentWrites } from '../../query/txn/recent-writes.js';
import { isFinal, nextTxnStatus } from '../../query/txn/txn-state.js';

const key = (...bytes: number[]) => Uint8Array.from(bytes);

describe('RecentWrites', () => {
  it('finds the first write after an LSN into a span, and forgets what no reader needs', () => {
    const recent = new RecentWrites();
    recent.add(lsn(5), [key(1, 9), key(1, 2)]);
    recent.add(lsn(6), [key(2, 0)]);
    expect(recent.firstWriteInto({ gte: key(1), lt: key(2) }, lsn(4))).toBe(5);
    expect(recent.firstWriteInto({ gte: key(1), lt: key(2) }, lsn(5))).toBeNull(); // read after it
    expect(recent.firstWriteInto(pointSpan(key(1, 2)), lsn(0))).toBe(5);
    expect(recent.firstWriteInto(pointSpan(key(1, 3)), lsn(0))).toBeNull();
    expect(recent.firstWriteInto({ gte: key(2), lt: key(3) }, lsn(0))).toBe(6);
    recent.retain(lsn(5));
    expect(recent.size).toEqual({ records: 1, keys: 1 });
    expect(recent.firstWriteInto({ gte: key(1), lt: key(2) }, lsn(0))).toBeNull();
  });

  it('a catalog change (no keys) conflicts with every read before it', () => {
    const recent = new RecentWrites();
    recent.add(lsn(3), null);
    expect(recent.firstWriteInto(pointSpan(key(7)), lsn(2))).toBe(3);
    expect(recent.firstWriteInto(pointSpan(key(7)), lsn(3))).toBeNull();
  });
});

describe('ReadSet', () => {
  it('reports a conflict only for spans written after they were read', () => {
    const recent = new RecentWrites();
    const reads = new ReadSet(10);
    reads.addKey(key(1, 1), lsn(10));
    reads.addSpan({ gte: key(3), lt: key(4) }, lsn(12));
    recent.add(lsn(11), [key(3, 5)]); // before the span was read: fine
    expect(reads.firstConflict(recent, lsn(12))).toBeNull();
    // Checked through 12: the next check only meets what came after.
    recent.add(lsn(13), [key(1, 1)]);
    expect(reads.firstConflict(recent, lsn(13))).toEqual({ lsn: 13 });
    const fresh = new ReadSet(10);
    fresh.addSpan({ gte: key(3), lt: key(4) }, lsn(10));
    expect(fresh.firstConflict(recent, lsn(13))).toEqual({ lsn: 11 });
  });

  it('is bounded', () => {
    const reads = new ReadSet(1);
    reads.addKey(key(1), lsn(1));
    expect(() => reads.addKey(key(2), lsn(1))).toThrow(/more than 1 key ranges/);
  });
});

describe('transaction state machine', () => {
  it('moves as documented and refuses the rest', () => {
    expect(nextTxnStatus('open', 'commit')).toBe('committing');
    expect(nextTxnStatus('committing', 'committed')).toBe('committed');
    expect(nextTxnStatus('committing', 'commit_failed')).toBe('rolled_back');
    expect(nextTxnStatus('open', 'statement_failed')).toBe('aborted');
    expect(nextTxnStatus('aborted', 'commit')).toBe('rolled_back');
    expect(nextTxnStatus('open', 'expire')).toBe('expired');
    expect(nextTxnStatus('committing', 'expire')).toBeNull();
    expect(nextTxnStatus('committed', 'rollback')).toBeNull();
    expect(nextTxnStatus('expired', 'commit')).toBeNull();
    expect(['committed', 'rolled_back', 'expired'].every((s) => isFinal(s as never))).toBe(true);
    expect(isFinal('aborted')).toBe(false);
  });
});

describe('RecentWrites bound', () => {
  it('sheds the oldest records down to a key count and says through which LSN', () => {
    const recent = new RecentWrites();
    for (let i = 1; i <= 10; i++) recent.add(lsn(i), [key(i, 1), key(i, 2)]);
    expect(recent.shed(10)).toBe(5);
    expect(recent.size).toEqual({ records: 5, keys: 10 });
    expect(recent.shed(100)).toBeNull();
  });
});
