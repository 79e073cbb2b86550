import type { PlanNode } from './plan-node.js';

const DETAIL_LINES: [keyof PlanNode, string][] = [
  ['hash_cond', 'Hash Cond'],
  ['join_filter', 'Join Filter'],
  ['index_cond', 'Index Cond'],
  ['order_by', 'Order By'],
  ['filter', 'Filter'],
  ['group_key', 'Group Key'],
  ['sort_key', 'Sort Key'],
];

/** PostgreSQL-like text: one line per node, "->" for children, details indented below. */
export function renderText(root: PlanNode): string[] {
  const lines: string[] = [];
  const visit = (node: PlanNode, depth: number): void => {
    const indent = depth === 0 ? '' : `${' '.repeat(depth * 6 - 6)}  ->  `;
    const detailIndent = depth === 0 ? '  ' : ' '.repeat(depth * 6 + 2);
    let head = node.node_type;
    if (node.join_type && node.join_type !== 'Inner')
      head = `${node.node_type.replace(' Join', '')} ${node.join_type} Join`.replace('Nested Loop Left Join', 'Nested Loop Left Join');
    if (node.index_name) head += ` using ${node.index_name}`;
    if (node.relation) head += ` on ${node.relation}${node.alias && node.alias !== node.relation ? ` ${node.alias}` : ''}`;
    head += `  (cost=0.00..${node.estimated_cost.toFixed(2)} rows=${node.estimated_rows})`;
    if (node.actual_rows !== null) head += ` (actual time=${(node.actual_time_ms ?? 0).toFixed(3)} rows=${node.actual_rows} loops=${node.actual_loops ?? 1})`;
    lines.push(indent + head);
    for (const keys of node.hash_keys ?? []) lines.push(`${detailIndent}Hash Key: ${keys}`);
    for (const [key, label] of DETAIL_LINES) {
      const value = node[key];
      if (value === undefined) continue;
      lines.push(`${detailIndent}${label}: ${Array.isArray(value) ? value.join(', ') : String(value)}`);
    }
    for (const child of node.plans) visit(child, depth + 1);
  };
  visit(root, 0);
  return lines;
}

/** YAML of the plan object (block style, strings quoted only when needed). */
export function renderYaml(root: PlanNode): string {
  const out: string[] = [];
  const scalar = (v: unknown): string => {
    if (v === null) return 'null';
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    const s = String(v);
    return /^[\w .,()$-]+$/.test(s) && !/^(true|false|null|yes|no|~|-?\d)/i.test(s) && !s.includes(': ') ? s : JSON.stringify(s);
  };
  const node = (n: PlanNode, indent: string, first: string): void => {
    let prefix = first;
    for (const [key, value] of Object.entries(n)) {
      if (key === 'plans') continue;
      if (Array.isArray(value)) {
        out.push(`${prefix}${key}:`);
        for (const v of value) out.push(`${indent}  - ${scalar(v)}`);
      } else out.push(`${prefix}${key}: ${scalar(value)}`);
      prefix = indent;
    }
    if (n.plans.length === 0) {
      out.push(`${indent}plans: []`);
      return;
    }
    out.push(`${indent}plans:`);
    for (const child of n.plans) node(child, `${indent}    `, `${indent}  - `);
  };
  node(root, '', '');
  return out.join('\n') + '\n';
}
