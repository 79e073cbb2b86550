import { Rng } from '../differential/generate.js';

/** The differential test's seeded PRNG (mulberry32) plus the choices only the fuzzer makes, so any statement replays by seed. */
export class Rand extends Rng {
  /** Up to n distinct elements of xs, at least one. */
  some<T>(xs: readonly T[], n: number): T[] {
    const copy = [...xs];
    const out: T[] = [];
    const count = this.int(1, Math.min(n, copy.length));
    for (let i = 0; i < count; i++) out.push(copy.splice(this.int(0, copy.length - 1), 1)[0]!);
    return out;
  }
}
