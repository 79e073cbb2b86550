import { compareKeys } from '../../core/key-encoding.js';
import type { KeySpan } from './recent-writes.js';

/** Key spans merged into sorted, disjoint ranges: "does any span hold this key" is a binary search. */
export class SpanSet {
  private spans: KeySpan[] = [];

  get size(): number {
    return this.spans.length;
  }

  /** Adds spans (any order), keeping the set sorted and merged. */
  addAll(more: readonly KeySpan[]): void {
    if (more.length === 0) return;
    const all = [...this.spans, ...more].sort((a, b) => compareKeys(a.gte, b.gte));
    const merged: KeySpan[] = [];
    for (const span of all) {
      const last = merged[merged.length - 1];
      if (last && compareKeys(span.gte, last.lt) <= 0) {
        if (compareKeys(span.lt, last.lt) > 0) merged[merged.length - 1] = { gte: last.gte, lt: span.lt };
      } else {
        merged.push(span);
      }
    }
    this.spans = merged;
  }

  has(key: Uint8Array): boolean {
    let low = 0;
    let high = this.spans.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareKeys(this.spans[mid]!.gte, key) <= 0) low = mid + 1;
      else high = mid;
    }
    const span = this.spans[low - 1];
    return span !== undefined && compareKeys(key, span.lt) < 0;
  }

  clear(): void {
    this.spans = [];
  }
}
