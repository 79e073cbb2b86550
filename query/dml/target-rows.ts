import type { TableDef } from '../../core/catalog.js';
import { asCondition, bindExpr, bindFrom, KEY_COLUMNS, scanOf, Scope } from '../bind/index.js';
import { joinNode } from '../bind/from.js';
import type { FromItem, SqlExpr } from '../parse/index.js';
import type { Plan } from '../plan/nodes.js';
import { optimize } from '../optimize/index.js';
import { pullRows } from '../run-query.js';
import type { QValue } from '../types/contract.js';
import { exprEnv, type DmlRun } from './common.js';
import type { Row } from '../exec/index.js';

/** The target table row set of UPDATE/DELETE: [table columns..., key, image, FROM/USING columns...]. */
export interface TargetRows {
  readonly scope: Scope;
  readonly plan: Plan;
  readonly alias: string;
  readonly width: number;
}

export function bindTargetRows(run: DmlRun, table: TableDef, aliasName: string | null, from: readonly FromItem[], where: SqlExpr | null): TargetRows {
  const alias = aliasName ?? table.name;
  const scope = new Scope(null);
  const columns = [...table.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable })), ...KEY_COLUMNS];
  scope.add(alias, columns, alias === table.name ? table.name : undefined);
  let plan: Plan = scanOf(table, alias, true);
  if (from.length > 0) {
    const rest = bindFrom(from, scope, run.binder.deps);
    plan = joinNode('cross', plan, rest, null);
  }
  if (where) {
    const predicate = asCondition(run.ctx, bindExpr(where, exprEnv(run, scope, 'WHERE')), 'WHERE');
    plan = { kind: 'filter', input: plan, predicate, columns: plan.columns };
  }
  return { scope, plan, alias, width: table.columns.length };
}

/** Runs the target plan through the writer's view; each target row once (first match wins, like PostgreSQL). */
export async function collectTargets(run: DmlRun, target: TargetRows): Promise<Row[]> {
  const plan = optimize(target.plan, { types: run.ctx.types, rowCount: (id) => run.view.catalog.table(id)?.stats.rowCount ?? 0 });
  const seen = new Set<string>();
  const rows: Row[] = [];
  await pullRows(plan, run.exec(), (row) => {
    const key = Buffer.from(row[target.width] as unknown as Uint8Array).toString('hex');
    if (!seen.has(key)) {
      seen.add(key);
      rows.push(row);
    }
    return true;
  });
  return rows;
}

export function keyOf(row: Row, width: number): { key: Uint8Array; image: Uint8Array; values: QValue[] } {
  return { key: row[width] as unknown as Uint8Array, image: row[width + 1] as unknown as Uint8Array, values: row.slice(0, width) };
}
