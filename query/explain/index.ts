import { SvcError } from '../../core/errors.js';
import type { Projections } from '../../projections/index.js';
import type { NodeStats } from '../exec/index.js';
import type { ParsedStatement } from '../parse/index.js';
import type { Plan } from '../plan/nodes.js';
import { convertParams, type PreparedQuery } from '../prepare.js';
import type { QueryResult } from '../result.js';
import { execContext, pullRows, withSnapshot } from '../run-query.js';
import type { StatementEnv } from '../statement.js';
import type { TypeSystem } from '../types/contract.js';
import { describePlan, type PlanNode } from './plan-node.js';
import { renderText, renderYaml } from './render.js';

export type { PlanNode } from './plan-node.js';

export interface ExplainOptionsInput {
  readonly params?: readonly unknown[];
  readonly analyze?: boolean;
  readonly format?: 'json' | 'text' | 'yaml';
}

export interface ExplainResult {
  readonly plan: PlanNode;
  readonly text?: string;
  readonly yaml?: string;
  readonly planning_time_ms: number;
  readonly execution_time_ms?: number;
}

export interface ExplainDeps {
  readonly projections: Projections;
  readonly types: TypeSystem;
  readonly env: StatementEnv;
  prepare(statement: ParsedStatement): PreparedQuery;
}

/** Plans (and with analyze, runs to the end, discarding rows) one query. */
export async function explainQuery(
  deps: ExplainDeps,
  statement: ParsedStatement,
  options: { analyze: boolean; format: 'json' | 'text' | 'yaml' },
): Promise<ExplainResult> {
  const prepared = deps.prepare(statement);
  let stats: Map<Plan, NodeStats> | null = null;
  let executionMs: number | undefined;
  if (options.analyze) {
    stats = new Map();
    const started = performance.now();
    const params = convertParams(deps.types, prepared.paramTypes, deps.env.params);
    await withSnapshot(
      deps.projections.store,
      (source) =>
        pullRows(
          prepared.plan,
          execContext({
            types: deps.types,
            source,
            params,
            deadlineMs: deps.env.deadlineMs,
            signal: deps.env.signal,
            stats,
            materializedRowsMax: deps.env.limits.materializedRowsMax,
            scanCache: deps.env.scanCache,
            efSearch: deps.env.efSearch,
          }),
          () => true,
        ),
      deps.projections.vectors,
    );
    executionMs = round(performance.now() - started);
  }
  const plan = describePlan(prepared.plan, stats);
  const planning = round(prepared.planningTimeMs);
  const base = { plan, planning_time_ms: planning, ...(executionMs !== undefined ? { execution_time_ms: executionMs } : {}) };
  if (options.format === 'text') return { ...base, text: renderText(plan).join('\n') };
  if (options.format === 'yaml') return { ...base, yaml: renderYaml(plan) };
  return base;
}

/** EXPLAIN [ANALYZE] as a SQL statement: PostgreSQL's single "QUERY PLAN" text column. */
export async function explainStatement(deps: ExplainDeps, statement: ParsedStatement): Promise<QueryResult> {
  if (statement.body.kind !== 'query') {
    throw new SvcError('INVALID_QUERY', 'EXPLAIN supports SELECT statements', {});
  }
  const options = statement.explain!;
  const result = await explainQuery(deps, statement, { analyze: options.analyze, format: options.format });
  let lines: string[];
  if (options.format === 'json') lines = [JSON.stringify([{ Plan: result.plan, 'Planning Time': result.planning_time_ms }], null, 2)];
  else if (options.format === 'yaml') lines = [result.yaml!];
  else {
    lines = renderText(result.plan);
    lines.push(`Planning Time: ${result.planning_time_ms.toFixed(3)} ms`);
    if (result.execution_time_ms !== undefined) lines.push(`Execution Time: ${result.execution_time_ms.toFixed(3)} ms`);
  }
  return {
    command: 'EXPLAIN',
    columns: [{ name: 'QUERY PLAN', type: 'TEXT', nullable: false }],
    rows: lines.map((line) => ({ 'QUERY PLAN': line })),
    rowCount: lines.length,
    affectedRows: null,
    truncated: false,
  };
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
