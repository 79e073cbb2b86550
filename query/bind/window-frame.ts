import type { FrameBound as AstFrameBound, SqlExpr, WindowFrame as AstWindowFrame, WindowSpec } from '../parse/ast/index.js';
import type { FrameBound, WindowFrame } from '../plan/expr.js';
import { invalid } from './context.js';

/** PostgreSQL's default: RANGE UNBOUNDED PRECEDING to CURRENT ROW (all of it without ORDER BY). */
export const DEFAULT_FRAME: WindowFrame = { mode: 'range', start: { kind: 'unbounded_preceding' }, end: { kind: 'current' } };

/** Evaluates a frame offset (`n PRECEDING`) to a constant row count. */
export type OffsetOf = (expr: SqlExpr) => number;

/**
 * A window frame clause, checked as PostgreSQL checks it. The executor counts ROWS and GROUPS
 * offsets and RANGE bounds at UNBOUNDED or CURRENT ROW; RANGE offsets and EXCLUDE are refused
 * with reason 'unsupported' rather than answered wrongly.
 */
export function frameOf(spec: AstWindowFrame | null, offsetOf: OffsetOf = literalOffset): WindowFrame {
  if (spec === null) return DEFAULT_FRAME;
  if (spec.exclude !== 'no_others') throw unsupported('window frame EXCLUDE is not supported');
  const start = boundOf(spec.start, offsetOf);
  const end = boundOf(spec.end, offsetOf);
  if (start.kind === 'unbounded_following') throw invalid('frame start cannot be UNBOUNDED FOLLOWING');
  if (end.kind === 'unbounded_preceding') throw invalid('frame end cannot be UNBOUNDED PRECEDING');
  if (start.kind === 'current' && end.kind === 'preceding') throw invalid('frame starting from current row cannot have preceding rows');
  if (start.kind === 'following' && (end.kind === 'preceding' || end.kind === 'current'))
    throw invalid('frame starting from following row cannot have preceding rows');
  if (spec.mode === 'range' && (hasOffset(start) || hasOffset(end))) throw unsupported('RANGE with offset PRECEDING/FOLLOWING is not supported');
  return { mode: spec.mode, start, end };
}

function boundOf(bound: AstFrameBound, offsetOf: OffsetOf): FrameBound {
  switch (bound.kind) {
    case 'unbounded_preceding':
    case 'unbounded_following':
      return { kind: bound.kind };
    case 'current_row':
      return { kind: 'current' };
    case 'preceding':
    case 'following': {
      const offset = offsetOf(bound.offset);
      if (!Number.isInteger(offset) || offset < 0) throw invalid('frame offset must not be negative', { sqlstate: '22013' });
      return { kind: bound.kind, offset };
    }
  }
}

const hasOffset = (b: FrameBound): boolean => b.kind === 'preceding' || b.kind === 'following';

function literalOffset(expr: SqlExpr): number {
  if (expr.kind === 'number' && /^[0-9]+$/.test(expr.text)) return Number(expr.text);
  throw unsupported('window frame offsets must be integer constants');
}

function unsupported(message: string): Error {
  return invalid(message, { reason: 'unsupported' });
}

/** Named windows of the query being bound, by name (WINDOW w AS (...)). */
export type NamedWindows = ReadonlyMap<string, WindowSpec>;

/**
 * The window an OVER clause means: its own clauses on top of the window it names (OVER w, or
 * OVER (w ORDER BY ...)), with PostgreSQL's rules on what a reference may add.
 */
export function resolveWindow(spec: WindowSpec, named: NamedWindows): WindowSpec {
  if (spec.ref === null) return spec;
  const base = named.get(spec.ref);
  if (!base) throw invalid(`window "${spec.ref}" does not exist`);
  const resolved = resolveWindow(base, named);
  const bare = spec.partitionBy.length === 0 && spec.orderBy.length === 0 && spec.frame === null;
  if (bare) return resolved;
  if (spec.partitionBy.length > 0) throw invalid(`cannot override PARTITION BY clause of window "${spec.ref}"`);
  if (spec.orderBy.length > 0 && resolved.orderBy.length > 0) throw invalid(`cannot override ORDER BY clause of window "${spec.ref}"`);
  if (resolved.frame !== null) throw invalid(`cannot copy window "${spec.ref}" because it has a frame clause`);
  return {
    name: spec.name,
    ref: null,
    partitionBy: resolved.partitionBy,
    orderBy: spec.orderBy.length > 0 ? spec.orderBy : resolved.orderBy,
    frame: spec.frame,
    loc: spec.loc,
  };
}
