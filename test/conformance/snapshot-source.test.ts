import { SnapshotSource } from '../../query/exec/source.js';
import { rowSourceSuite } from './row-source-suite.js';

// What every SELECT outside a transaction reads (query/run-query.ts withSnapshot).
rowSourceSuite({
  name: 'SnapshotSource over a store snapshot',
  isolated: true,
  async open(fixture, own) {
    if (own.length > 0) await fixture.commit([...own]);
    // A SELECT opens its snapshot past the read barrier (writes are answered before they are applied).
    await fixture.stack.projections.readBarrier.wait();
    const store = fixture.stack.projections.store;
    const snapshot = store.snapshot();
    return { source: new SnapshotSource(store, snapshot), close: () => snapshot.close() };
  },
});
