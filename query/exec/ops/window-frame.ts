import type { FrameBound, WindowFrame } from '../../plan/expr.js';

/** The frame of every position of a sorted partition as [start, end) positions, clamped. */
export interface FrameSpans {
  (i: number): readonly [number, number];
}

/**
 * `ends[i]` is one past the last peer of position i (rows equal in ORDER BY); a RANGE bound at
 * CURRENT ROW reaches to the first peer (start) or past the last (end).
 */
export function frameSpans(frame: WindowFrame, ends: readonly number[]): FrameSpans {
  const n = ends.length;
  const starts = new Array<number>(n);
  for (let i = 0; i < n; i++) starts[i] = i > 0 && ends[i - 1] === ends[i] ? starts[i - 1]! : i;
  const clamp = (v: number): number => Math.min(n, Math.max(0, v));
  const position = (bound: FrameBound, i: number, isEnd: boolean): number => {
    switch (bound.kind) {
      case 'unbounded_preceding':
        return 0;
      case 'unbounded_following':
        return n;
      case 'current':
        return frame.mode === 'range' ? (isEnd ? ends[i]! : starts[i]!) : isEnd ? i + 1 : i;
      case 'preceding':
        return i - bound.offset + (isEnd ? 1 : 0);
      case 'following':
        return i + bound.offset + (isEnd ? 1 : 0);
    }
  };
  return (i) => [clamp(position(frame.start, i, false)), clamp(position(frame.end, i, true))];
}
