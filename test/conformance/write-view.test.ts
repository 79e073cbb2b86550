import { lsn } from '../../core/units.js';
import { StagedView } from '../../query/ddl/batch.js';
import { layeredWriteView } from '../../query/txn/layered.js';
import { ReadSet } from '../../query/txn/read-set.js';
import { holdWriteView, overlayOf } from './fixture.js';
import { writeViewSuite } from './write-view-suite.js';

// The one writer's view: applied state plus records appended but not yet applied.
writeViewSuite({
  name: "the sequencer's view",
  async open(fixture, own) {
    const held = await holdWriteView(fixture, own);
    return { view: held.view, close: () => held.release() };
  },
});

// What a DML statement of a transaction validates against (query/txn/transaction.ts dmlView).
writeViewSuite({
  name: 'layeredWriteView (a transaction over the sequencer)',
  async open(fixture, own) {
    const held = await holdWriteView(fixture, []);
    const view = layeredWriteView(held.view, overlayOf(fixture, own), {
      reads: new ReadSet(1_000_000),
      seenLsn: lsn(fixture.stack.projections.sequencer.headLsn),
    });
    return { view, close: () => held.release() };
  },
});

// What each statement of a DDL batch validates against (query/ddl/batch.ts).
writeViewSuite({
  name: 'StagedView (a DDL batch over the sequencer)',
  async open(fixture, own) {
    const held = await holdWriteView(fixture, own);
    return { view: new StagedView(held.view).view, close: () => held.release() };
  },
});
