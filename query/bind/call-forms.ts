import type { FuncCall, SqlExpr } from '../parse/index.js';
import { invalid, mismatch } from './context.js';
import { bindExpr, type ExprEnv } from './expr.js';

/**
 * Call forms PostgreSQL has and svcdb's function library does not name, rewritten to plain calls
 * before binding: make_interval's named arguments, and the ordered-set aggregates.
 */

const MAKE_INTERVAL_PARAMS = ['years', 'months', 'weeks', 'days', 'hours', 'mins', 'secs'];

/**
 * make_interval(days => 2, hours => 1): the named arguments put at their parameters' places, the
 * ones not given 0 (its defaults), so the positional overloads of the library answer.
 */
export function positionalMakeInterval(node: FuncCall, env: ExprEnv): FuncCall {
  const names = node.argNames ?? [];
  const args: (SqlExpr | null)[] = [];
  node.args.forEach((arg, i) => {
    const name = names[i] ?? null;
    const at = name === null ? i : MAKE_INTERVAL_PARAMS.indexOf(name);
    if (at < 0) {
      const shown = node.args.map((a, j) => `${names[j] ? `${names[j]} => ` : ''}${env.ctx.types.typeText(bindExpr(a, env).type).toLowerCase()}`);
      throw mismatch(`function make_interval(${shown.join(', ')}) does not exist`, { function: 'make_interval' });
    }
    if (args[at] !== undefined && args[at] !== null) throw invalid(`argument name "${name ?? MAKE_INTERVAL_PARAMS[at]!}" used more than once`);
    args[at] = arg;
  });
  const zero = (): SqlExpr => ({ kind: 'number', text: '0', loc: node.loc });
  return { ...node, argNames: null, args: Array.from(args, (a) => a ?? zero()) };
}

/** PostgreSQL's ordered-set aggregates svcdb has. */
export const ORDERED_SET_AGGREGATES = new Set(['percentile_cont', 'percentile_disc', 'mode']);

/**
 * `percentile_cont(0.5) WITHIN GROUP (ORDER BY x)` as the aggregate call `percentile_cont(x, 0.5
 * ORDER BY x)`: the aggregate steps through the group's values in that order (the executor's ORDER
 * BY inside an aggregate) and reads the direct argument from them. Without WITHIN GROUP, or with
 * DISTINCT, ORDER BY or OVER, PostgreSQL's errors.
 */
export function orderedSetCall(node: FuncCall): FuncCall {
  const name = node.name.name;
  if (node.withinGroup.length === 0) throw invalid(`WITHIN GROUP is required for ordered-set aggregate ${name}`);
  if (node.over) throw invalid(`OVER is not supported for ordered-set aggregate ${name}`);
  if (node.distinct) throw invalid('cannot use DISTINCT with WITHIN GROUP');
  if (node.orderBy.length > 0) throw invalid('cannot use multiple ORDER BY clauses with WITHIN GROUP');
  if (node.withinGroup.length !== 1) throw mismatch(`function ${name} with ${node.withinGroup.length} ordering columns does not exist`, { function: name });
  return { ...node, args: [node.withinGroup[0]!.expr, ...node.args], orderBy: node.withinGroup, withinGroup: [] };
}
