import { FRAME_CODE_BASE, FRAME_CODES, type AstNode } from '../parse/index.js';
import type { FrameBound, WindowFrame } from '../plan/expr.js';
import { invalid } from './context.js';

/** PostgreSQL's default: RANGE UNBOUNDED PRECEDING to CURRENT ROW (all of it without ORDER BY). */
export const DEFAULT_FRAME: WindowFrame = { mode: 'range', start: { kind: 'unbounded_preceding' }, end: { kind: 'current' } };

/**
 * A window frame clause as node-sql-parser gives it: `ROWS bound` (start; the end is CURRENT
 * ROW) or `ROWS BETWEEN bound AND bound`, bounds as text ('UNBOUNDED PRECEDING', 'current row',
 * '2 FOLLOWING'). RANGE frames arrive as ROWS, with their CURRENT ROW and an end bound that
 * precedes as FRAME_CODES (parse/query-rewrites.ts). Checked as PostgreSQL checks them.
 */
export function frameOf(clause: AstNode | null | undefined): WindowFrame {
  if (!clause) return DEFAULT_FRAME;
  const parts: AstNode[] = clause.type === 'rows' ? [clause.expr] : clause.operator === 'BETWEEN' ? (clause.right?.value ?? []) : [];
  if (parts.length === 0) throw invalid('unsupported window frame', { reason: 'unsupported' });
  const parsed = parts.map(boundOf);
  const range = parsed.some((p) => p.range);
  const start = parsed[0]!.bound;
  const end = parsed[1]?.bound ?? { kind: 'current' };
  if (start.kind === 'unbounded_following') throw invalid('frame start cannot be UNBOUNDED FOLLOWING');
  if (end.kind === 'unbounded_preceding') throw invalid('frame end cannot be UNBOUNDED PRECEDING');
  if (start.kind === 'current' && end.kind === 'preceding') throw invalid('frame starting from current row cannot have preceding rows');
  if (start.kind === 'following' && (end.kind === 'preceding' || end.kind === 'current'))
    throw invalid('frame starting from following row cannot have preceding rows');
  return { mode: range ? 'range' : 'rows', start, end };
}

function boundOf(node: AstNode): { bound: FrameBound; range: boolean } {
  const text = String(node?.value ?? '')
    .trim()
    .toLowerCase();
  if (text === 'unbounded preceding') return { bound: { kind: 'unbounded_preceding' }, range: false };
  if (text === 'unbounded following') return { bound: { kind: 'unbounded_following' }, range: false };
  if (text === 'current row') return { bound: { kind: 'current' }, range: false };
  const m = /^(\d+)\s+(preceding|following)$/.exec(text);
  if (!m) throw invalid(`unsupported window frame bound: ${text}`, { reason: 'unsupported' });
  const offset = Number(m[1]);
  if (m[2] === 'following' && offset >= FRAME_CODE_BASE) {
    if (offset === FRAME_CODES.rangeCurrent) return { bound: { kind: 'current' }, range: true };
    if (offset === FRAME_CODES.endUnboundedPreceding) return { bound: { kind: 'unbounded_preceding' }, range: false };
    return { bound: { kind: 'preceding', offset: offset - FRAME_CODE_BASE }, range: false };
  }
  return { bound: { kind: m[2] as 'preceding' | 'following', offset }, range: false };
}
