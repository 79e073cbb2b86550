import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings of `svcdb serve` that can be changed once node runs (the young generation's size
 * cannot: it is on node's command line, docs/configuration.md "Node options"). Called first thing
 * in serve, so they hold however node was started.
 *
 * Allocation-site pretenuring off: V8 starts allocating an object or array literal straight into the
 * old generation once most of what one of its sites made survived a scavenge, and a site stays
 * pretenured while the code runs. After a read load (cached rows survive), single-row inserts then
 * put their short-lived objects in the old generation, where the scavenger treats them as alive and
 * keeps what they point to: scavenges of 4-10 ms every ~35 ms instead of ~1 ms, the inserts' p99
 * 12 ms instead of 6 and a tenth less throughput (docs/benchmarks.md, the fifteenth session).
 */
export function applyServeV8Settings(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
