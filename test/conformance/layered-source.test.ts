import { lsn } from '../../core/units.js';
import { SnapshotSource } from '../../query/exec/source.js';
import { LayeredSource } from '../../query/txn/layered.js';
import { ReadSet } from '../../query/txn/read-set.js';
import { overlayOf, type Fixture } from './fixture.js';
import { rowSourceSuite, type OpenedSource } from './row-source-suite.js';
import type { RowChange } from '../../core/log-records.js';

/** A transaction's SELECT source (query/txn/transaction.ts withReadSource): its staged changes over a snapshot. */
function openLayered(fixture: Fixture, own: readonly RowChange[], tracked: boolean): OpenedSource {
  const store = fixture.stack.projections.store;
  const snapshot = store.snapshot();
  const tracking = tracked ? { reads: new ReadSet(1_000_000), seenLsn: lsn(fixture.stack.projections.sequencer.headLsn) } : null;
  const source = new LayeredSource(new SnapshotSource(store, snapshot), overlayOf(fixture, own), tracking);
  return { source, close: () => snapshot.close() };
}

/** A statement's snapshot is opened past the read barrier (writes are answered before they are applied). */
async function openLayeredAfterBarrier(fixture: Fixture, own: readonly RowChange[], tracked: boolean): Promise<OpenedSource> {
  await fixture.stack.projections.readBarrier.wait();
  return openLayered(fixture, own, tracked);
}

rowSourceSuite({
  name: 'LayeredSource (read committed / repeatable read: untracked)',
  isolated: true,
  open: (f, own) => openLayeredAfterBarrier(f, own, false),
});
rowSourceSuite({ name: 'LayeredSource (serializable: reads tracked)', isolated: true, open: (f, own) => openLayeredAfterBarrier(f, own, true) });
