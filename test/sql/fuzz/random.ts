/** A seeded PRNG (mulberry32) and the choices the generator makes with it, so any statement replays by seed. */
export class Rand {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Up to n distinct elements of xs, at least one. */
  some<T>(xs: readonly T[], n: number): T[] {
    const copy = [...xs];
    const out: T[] = [];
    const count = this.int(1, Math.min(n, copy.length));
    for (let i = 0; i < count; i++) out.push(copy.splice(this.int(0, copy.length - 1), 1)[0]!);
    return out;
  }
}
