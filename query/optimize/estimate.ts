import { conjuncts } from '../plan/expr-util.js';
import type { Estimate, Plan } from '../plan/nodes.js';
import type { OptimizerDeps } from './deps.js';

const CPU_PER_ROW = 0.01;

/** Fills estimated rows and cost on every node, bottom-up, from the table statistics. */
export function estimate(plan: Plan, deps: OptimizerDeps): Plan {
  switch (plan.kind) {
    case 'scan': {
      const rows = deps.rowCount(plan.table.id);
      const est = plan.est ?? { rows, cost: rows + 1 };
      const filtered = plan.filter && plan.access.kind === 'seq' ? Math.max(1, est.rows) : est.rows;
      return { ...plan, est: { rows: Math.round(filtered), cost: round(est.cost) } };
    }
    case 'values':
      return { ...plan, est: { rows: plan.rows.length, cost: plan.rows.length * CPU_PER_ROW } };
    case 'one_row':
      return { ...plan, est: { rows: 1, cost: CPU_PER_ROW } };
    // PostgreSQL's default guess for a function returning a set.
    case 'function_scan':
    case 'rows_from':
      return { ...plan, est: { rows: 1000, cost: 1000 * CPU_PER_ROW } };
    // Unknown until run: PostgreSQL's guess of 10 rounds, the working table the size of the first.
    case 'worktable_scan':
      return { ...plan, est: { rows: 10, cost: 10 * CPU_PER_ROW } };
    case 'recursive_union': {
      const left = estimate(plan.left, deps);
      const right = estimate(plan.right, deps);
      return { ...plan, left, right, est: { rows: left.est!.rows + 10 * right.est!.rows, cost: round(left.est!.cost + 10 * right.est!.cost) } };
    }
    case 'join': {
      const left = estimate(plan.left, deps);
      const right = estimate(plan.right, deps);
      const l = left.est!;
      const r = right.est!;
      const rows = plan.hash ? Math.max(l.rows, r.rows) : plan.on ? Math.max(1, l.rows * r.rows * 0.1) : l.rows * r.rows;
      const cost = l.cost + r.cost + (plan.hash ? (l.rows + r.rows) * 2 * CPU_PER_ROW : l.rows * r.rows * CPU_PER_ROW);
      return { ...plan, left, right, est: { rows: Math.round(rows), cost: round(cost) } };
    }
    case 'setop': {
      const left = estimate(plan.left, deps);
      const right = estimate(plan.right, deps);
      return { ...plan, left, right, est: { rows: left.est!.rows + right.est!.rows, cost: round(left.est!.cost + right.est!.cost) } };
    }
    default: {
      const input = estimate(plan.input, deps);
      return { ...plan, input, est: unary(plan, input.est!) } as Plan;
    }
  }
}

function unary(plan: Plan, input: Estimate): Estimate {
  const n = input.rows;
  switch (plan.kind) {
    case 'filter':
      return { rows: Math.max(1, Math.round(n * Math.pow(0.33, conjuncts(plan.predicate).length))), cost: round(input.cost + n * CPU_PER_ROW) };
    case 'aggregate':
      return { rows: plan.groupBy.length === 0 ? 1 : Math.max(1, Math.round(n * 0.1)), cost: round(input.cost + n * 2 * CPU_PER_ROW) };
    case 'sort':
      return { rows: n, cost: round(input.cost + n * Math.log2(n + 2) * CPU_PER_ROW) };
    case 'limit': {
      const limit = plan.limit?.kind === 'const' && plan.limit.value !== null ? Number(plan.limit.value) : n;
      const offset = plan.offset?.kind === 'const' && plan.offset.value !== null ? Number(plan.offset.value) : 0;
      const rows = Math.max(0, Math.min(n, limit + offset) - offset);
      const fraction = n > 0 ? Math.min(1, (limit + offset) / n) : 1;
      return { rows, cost: round(input.cost * (isBlocking(plan) ? 1 : fraction)) };
    }
    case 'distinct':
      return { rows: Math.max(1, Math.round(n * 0.5)), cost: round(input.cost + n * CPU_PER_ROW) };
    default:
      return { rows: n, cost: round(input.cost + n * CPU_PER_ROW) };
  }
}

function isBlocking(plan: Plan): boolean {
  if (plan.kind === 'sort' || plan.kind === 'aggregate' || plan.kind === 'window') return true;
  if (plan.kind === 'limit' || plan.kind === 'project' || plan.kind === 'filter' || plan.kind === 'distinct') return isBlocking(plan.input);
  return false;
}

const round = (x: number): number => Math.round(x * 100) / 100;
