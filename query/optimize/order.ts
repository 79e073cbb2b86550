import type { IndexDef } from '../../core/catalog.js';
import type { SortKey } from '../plan/expr.js';
import type { Plan, ScanNode } from '../plan/nodes.js';
import type { TopN } from '../plan/ir.js';
import { vectorOrderedInput } from './vector.js';

/**
 * ORDER BY ... LIMIT over a single table: when an index (or the primary key) yields rows in the
 * requested order, scan it in that order and drop the sort, so LIMIT stops after a few rows.
 */
export function indexOrder(plan: Plan): Plan {
  switch (plan.kind) {
    case 'limit': {
      const rewritten = orderedInput(plan.input) ?? (plan.limit ? vectorOrderedInput(plan.input, { limit: plan.limit, offset: plan.offset }) : null);
      if (rewritten) return { ...plan, input: rewritten };
      const input = indexOrder(plan.input);
      return { ...plan, input: plan.limit ? withTopN(input, { limit: plan.limit, offset: plan.offset }) : input };
    }
    case 'scan':
    case 'values':
    case 'one_row':
    case 'function_scan':
    case 'rows_from':
    case 'worktable_scan':
      return plan;
    case 'join':
    case 'setop':
    case 'recursive_union':
      return { ...plan, left: indexOrder(plan.left), right: indexOrder(plan.right) };
    default:
      return { ...plan, input: indexOrder(plan.input) } as Plan;
  }
}

/** Marks the sort directly under LIMIT (through a projection) to keep only the rows LIMIT can emit. */
function withTopN(plan: Plan, topN: TopN): Plan {
  if (plan.kind === 'project') return { ...plan, input: withTopN(plan.input, topN) };
  if (plan.kind === 'sort') return { ...plan, topN };
  return plan;
}

/** Sort over [project over] [filter over] scan, with keys that are plain scan columns. */
function orderedInput(plan: Plan): Plan | null {
  if (plan.kind === 'project') {
    const inner = orderedInput(plan.input);
    return inner ? { ...plan, input: inner } : null;
  }
  if (plan.kind !== 'sort') return null;
  let below = plan.input;
  let mapping: number[] | null = null;
  let project: Extract<Plan, { kind: 'project' }> | null = null;
  if (below.kind === 'project') {
    project = below;
    mapping = below.exprs.map((e) => (e.kind === 'column' ? e.index : -1));
    below = below.input;
  }
  if (below.kind !== 'scan') return null;
  const columns = plan.keys.map((k) => (k.expr.kind === 'column' ? (mapping ? (mapping[k.expr.index] ?? -1) : k.expr.index) : -1));
  if (columns.some((c) => c < 0)) return null;
  const scan = orderedScan(below, columns, plan.keys);
  if (!scan) return null;
  return project ? { ...project, input: scan } : scan;
}

function orderedScan(scan: ScanNode, columns: readonly number[], keys: readonly SortKey[]): ScanNode | null {
  if (scan.access.kind === 'vector') return null;
  const candidates: IndexDef[] = scan.access.kind === 'seq' ? scan.table.indexes.filter((i) => i.kind === 'btree') : [scan.access.index];
  for (const index of candidates) {
    const skip = scan.access.kind === 'seq' ? 0 : scan.access.eq.length;
    const reverse = matches(scan, index, skip, columns, keys);
    if (reverse === null) continue;
    if (scan.access.kind !== 'seq') return { ...scan, access: { ...scan.access, reverse } };
    const kind = index.primary ? 'pk' : 'index';
    return { ...scan, access: { kind, index, eq: [], lower: null, upper: null, reverse, condText: '' } };
  }
  return null;
}

/** null: the index does not give this order; else whether to scan it backwards. */
function matches(scan: ScanNode, index: IndexDef, skip: number, columns: readonly number[], keys: readonly SortKey[]): boolean | null {
  // Secondary index entries are ordered by the index key, then the primary key.
  const ids = index.primary ? index.columnIds : [...index.columnIds, ...scan.table.primaryKey];
  const desc = index.primary ? index.descending : [...index.descending, ...scan.table.primaryKey.map(() => false)];
  const positions = ids.map((id) => scan.table.columns.findIndex((c) => c.id === id)).slice(skip);
  if (columns.length > positions.length) return null;
  let reverse: boolean | null = null;
  for (let i = 0; i < columns.length; i++) {
    if (positions[i] !== columns[i]) return null;
    const key = keys[i]!;
    // Key order is ASC NULLS LAST per column (complemented for DESC columns).
    const indexDesc = desc[i + skip] === true;
    const wantDesc = key.descending !== indexDesc;
    if (key.nullsFirst !== key.descending) return null;
    if (reverse === null) reverse = wantDesc;
    else if (reverse !== wantDesc) return null;
  }
  return reverse;
}
