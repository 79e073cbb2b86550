import type { Plan, ScanNode } from '../plan/nodes.js';
import { andAll, conjuncts } from '../plan/expr-util.js';
import { chooseAccess } from './access.js';
import type { OptimizerDeps } from './deps.js';
import { estimate } from './estimate.js';
import { hashKeysOf } from './joins.js';
import { reorderJoins } from './join-order.js';
import { indexOrder } from './order.js';
import { pushdown } from './pushdown.js';
import { pruneColumns } from './prune.js';

export type { OptimizerDeps } from './deps.js';

/** Logical plan -> physical plan: pushdown, access paths, hash joins, index order, estimates. */
export function optimize(plan: Plan, deps: OptimizerDeps): Plan {
  const pushed = reorderJoins(pushdown(plan), deps);
  const physical = physicalize(pushed, deps);
  return estimate(pruneColumns(indexOrder(physical)), deps);
}

function physicalize(plan: Plan, deps: OptimizerDeps): Plan {
  switch (plan.kind) {
    case 'scan':
      return withAccess(plan, deps);
    case 'values':
    case 'one_row':
    case 'function_scan':
    case 'rows_from':
    case 'worktable_scan':
      return plan;
    case 'join': {
      const node = { ...plan, left: physicalize(plan.left, deps), right: physicalize(plan.right, deps) };
      return { ...node, hash: hashKeysOf(node, deps.types) };
    }
    case 'setop':
    case 'recursive_union':
      return { ...plan, left: physicalize(plan.left, deps), right: physicalize(plan.right, deps) };
    default:
      return { ...plan, input: physicalize(plan.input, deps) } as Plan;
  }
}

function withAccess(scan: ScanNode, deps: OptimizerDeps): ScanNode {
  const choice = chooseAccess(scan, deps.rowCount(scan.table.id));
  const consumed = choice.access.kind === 'pk' || choice.access.kind === 'index' ? (choice.access.consumed ?? []) : [];
  const filter = andAll(conjuncts(scan.filter).filter((c) => !consumed.includes(c)));
  return { ...scan, filter, access: choice.access, est: { rows: choice.rows, cost: choice.cost } };
}
