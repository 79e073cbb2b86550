import type { TypeSystem } from '../types/contract.js';
import type { Expr } from '../plan/expr.js';
import { andAll, columnsOf, conjuncts, hasSubquery, shiftColumns } from '../plan/expr-util.js';
import type { JoinNode } from '../plan/nodes.js';

const sideOf = (e: Expr, lw: number): 'left' | 'right' | 'both' | 'none' => {
  const cols = [...columnsOf(e)];
  if (cols.length === 0) return 'none';
  if (cols.every((c) => c < lw)) return 'left';
  if (cols.every((c) => c >= lw)) return 'right';
  return 'both';
};

/** Equi-join conditions (left expr = right expr) become hash keys cast to a common type; the rest is residual. */
export function hashKeysOf(join: JoinNode, types: TypeSystem): JoinNode['hash'] {
  if (!join.on || join.joinType === 'cross' || join.lateral !== undefined) return null;
  const lw = join.left.columns.length;
  const leftKeys: Expr[] = [];
  const rightKeys: Expr[] = [];
  const residual: Expr[] = [];
  for (const c of conjuncts(join.on)) {
    const pair = c.kind === 'call' && c.fn.name === '=' && c.args.length === 2 && !hasSubquery(c) ? keyPair(c.args[0]!, c.args[1]!, lw, types) : null;
    if (pair) {
      leftKeys.push(pair[0]);
      rightKeys.push(pair[1]);
    } else residual.push(c);
  }
  if (leftKeys.length === 0) return null;
  return { leftKeys, rightKeys, residual: andAll(residual) };
}

function keyPair(a: Expr, b: Expr, lw: number, types: TypeSystem): [Expr, Expr] | null {
  const sa = sideOf(a, lw);
  const sb = sideOf(b, lw);
  let l: Expr;
  let r: Expr;
  if (sa === 'left' && sb === 'right') [l, r] = [a, b];
  else if (sa === 'right' && sb === 'left') [l, r] = [b, a];
  else return null;
  const common = types.commonType([l.type, r.type]);
  if (!common || common.name === 'unknown' || common.name === 'jsonb' || common.name === 'vector') return null;
  const cl = castTo(l, common, types);
  const cr = castTo(r, common, types);
  if (!cl || !cr) return null;
  return [cl, shiftColumns(cr, -lw)];
}

function castTo(e: Expr, target: Expr['type'], types: TypeSystem): Expr | null {
  if (e.type.name === target.name && e.type.name !== 'array') return e;
  const cast = types.resolveCast(e.type, target, 'implicit');
  return cast ? { kind: 'cast', type: target, cast, arg: e } : null;
}
