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
  const groups = frame.mode === 'groups' ? peerGroups(starts, ends) : null;
  const position = (bound: FrameBound, i: number, isEnd: boolean): number => {
    switch (bound.kind) {
      case 'unbounded_preceding':
        return 0;
      case 'unbounded_following':
        return n;
      case 'current':
        return frame.mode === 'rows' ? (isEnd ? i + 1 : i) : isEnd ? ends[i]! : starts[i]!;
      case 'preceding':
      case 'following': {
        const step = bound.kind === 'preceding' ? -bound.offset : bound.offset;
        if (groups) return groupEdge(groups, groups.of[i]! + step, isEnd, n);
        return i + step + (isEnd ? 1 : 0);
      }
    }
  };
  return (i) => [clamp(position(frame.start, i, false)), clamp(position(frame.end, i, true))];
}

/** GROUPS frames count peer groups: each position's group, and each group's [start, end). */
interface PeerGroups {
  readonly of: readonly number[];
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

function peerGroups(starts: readonly number[], ends: readonly number[]): PeerGroups {
  const of: number[] = [];
  const groupStarts: number[] = [];
  const groupEnds: number[] = [];
  for (let i = 0; i < starts.length; i++) {
    if (starts[i] === i) {
      groupStarts.push(i);
      groupEnds.push(ends[i]!);
    }
    of.push(groupStarts.length - 1);
  }
  return { of, starts: groupStarts, ends: groupEnds };
}

/** Where group g begins (a frame start) or ends (a frame end); groups before the first or after the last are empty edges. */
function groupEdge(groups: PeerGroups, g: number, isEnd: boolean, n: number): number {
  if (g < 0) return 0;
  if (g >= groups.starts.length) return n;
  return isEnd ? groups.ends[g]! : groups.starts[g]!;
}
