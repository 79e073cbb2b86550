import { SvcError } from '../../../core/errors.js';
import type { FrameBound, WindowFrame } from '../../plan/expr.js';
import type { QValue } from '../../types/contract.js';
import { compare, dec, parseDecimal, sub, type Decimal } from '../../types/decimal.js';

/** The frame of every position of a sorted partition as [start, end) positions, clamped. */
export interface FrameSpans {
  (i: number): readonly [number, number];
}

/**
 * `ends[i]` is one past the last peer of position i (rows equal in ORDER BY); a RANGE bound at
 * CURRENT ROW reaches to the first peer (start) or past the last (end).
 */
export function frameSpans(frame: WindowFrame, ends: readonly number[], range: RangeKeys | null = null): FrameSpans {
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
        if (frame.mode === 'range' && range) return rangeEdge(range, i, step, isEnd, starts, ends);
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

/** The one ORDER BY key of a RANGE offset frame, per sorted position, and its direction. */
export interface RangeKeys {
  readonly values: readonly QValue[];
  readonly descending: boolean;
}

function decimalOf(v: QValue): Decimal {
  if (typeof v === 'number' && Number.isInteger(v)) return dec(BigInt(v));
  if (typeof v === 'bigint') return dec(v);
  const parsed = typeof v === 'string' ? parseDecimal(v) : null;
  if (parsed) return parsed;
  throw new SvcError('INVALID_QUERY', 'RANGE offsets over NaN or infinite keys are not supported', { reason: 'unsupported' });
}

/**
 * A RANGE offset bound of position i: the first (start) or one past the last (end) row whose key,
 * measured in the ORDER BY direction, is at least (start) or at most (end) the current key plus
 * `step`. A NULL current key reaches its peers (the NULLs); NULL keys are never within an offset.
 */
function rangeEdge(range: RangeKeys, i: number, step: number, isEnd: boolean, starts: readonly number[], ends: readonly number[]): number {
  const n = range.values.length;
  if (range.values[i] === null) return isEnd ? ends[i]! : starts[i]!;
  const current = decimalOf(range.values[i]!);
  const limit = dec(BigInt(step));
  const within = (j: number): number => {
    const diff = sub(decimalOf(range.values[j]!), current);
    return compare(range.descending ? sub(dec(0n), diff) : diff, limit);
  };
  if (!isEnd) {
    for (let j = 0; j < n; j++) if (range.values[j] !== null && within(j) >= 0) return j;
    return n;
  }
  for (let j = n - 1; j >= 0; j--) if (range.values[j] !== null && within(j) <= 0) return j + 1;
  return 0;
}
