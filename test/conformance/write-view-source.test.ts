import { lsn } from '../../core/units.js';
import { WriteViewSource } from '../../query/exec/source.js';
import { layeredWriteView } from '../../query/txn/layered.js';
import { ReadSet } from '../../query/txn/read-set.js';
import { holdWriteView, overlayOf } from './fixture.js';
import { rowSourceSuite } from './row-source-suite.js';

// What a DML statement outside a transaction reads (query/dml/common.ts): the sequencer's view.
rowSourceSuite({
  name: "WriteViewSource over the sequencer's view",
  isolated: false,
  async open(fixture, own) {
    const held = await holdWriteView(fixture, own);
    return { source: new WriteViewSource(held.view), close: () => held.release() };
  },
});

// What a DML statement inside a transaction reads: its staged changes over the sequencer's view.
rowSourceSuite({
  name: "WriteViewSource over a transaction's layered write view",
  isolated: false,
  async open(fixture, own) {
    const held = await holdWriteView(fixture, []);
    const view = layeredWriteView(held.view, overlayOf(fixture, own), {
      reads: new ReadSet(1_000_000),
      seenLsn: lsn(fixture.stack.projections.sequencer.headLsn),
    });
    return { source: new WriteViewSource(view), close: () => held.release() };
  },
});
