import { compile, prepare } from '../exec/index.js';
import type { DeleteStatement, UpdateStatement } from '../parse/index.js';
import type { QueryResult } from '../result.js';
import type { QValue } from '../types/contract.js';
import { bindReturningIn, exprEnv, refuseWith, returningRow, submitDml, targetTable, type DmlDeps } from './common.js';
import { bindTargetRows, collectTargets, keyOf } from './target-rows.js';
import { bindAssignments } from './assignments.js';

/** UPDATE t SET ... [FROM ...] [WHERE ...] [RETURNING ...]: one log record. */
export function update(ast: UpdateStatement, deps: DmlDeps): Promise<QueryResult> {
  return submitDml(deps, 'UPDATE', async (run) => {
    refuseWith(ast.with);
    const table = targetTable(run.ctx, ast.table);
    const target = bindTargetRows(run, table, ast.alias, ast.from, ast.where);
    const env = exprEnv(run, target.scope, 'UPDATE');
    const sets = bindAssignments(run, table, env, ast.alias ?? table.name, ast.set, null);
    const returning = bindReturningIn(run, target.scope, ast.returning);
    const rows = await collectTargets(run, target);
    const exec = run.exec();
    const compiled = sets.map((s) => ({ position: s.position, c: compile(s.expr, exec) }));
    const returningEvals = returning?.exprs.map((e) => compile(e, exec)) ?? [];
    const writer = run.writer.writer(table);
    const out: QValue[][] = [];
    // New values first (SET sees each row as it was), then every check's reads at once, then the checks.
    const nexts = [];
    for (const row of rows) {
      await prepare(
        compiled.map((x) => x.c),
        row,
        exec,
      );
      const next = [...keyOf(row, target.width).values];
      for (const s of compiled) next[s.position] = s.c.eval(row);
      nexts.push(next);
    }
    await writer.prefetch(nexts, new Set(sets.map((s) => s.position)));
    for (const [i, row] of rows.entries()) {
      const { key, image, values } = keyOf(row, target.width);
      const next = nexts[i]!;
      await writer.update(key, image, values, next);
      if (returning) out.push(returningRow(returningEvals, [...next, ...row.slice(target.width)]));
    }
    return { affected: rows.length, returning: returning ? { ...returning, rows: out } : null };
  });
}

/** DELETE FROM t [USING ...] [WHERE ...] [RETURNING ...]: one log record (with FK cascades). */
export function remove(ast: DeleteStatement, deps: DmlDeps): Promise<QueryResult> {
  return submitDml(deps, 'DELETE', async (run) => {
    refuseWith(ast.with);
    const table = targetTable(run.ctx, ast.table);
    const target = bindTargetRows(run, table, ast.alias, ast.using, ast.where);
    const returning = bindReturningIn(run, target.scope, ast.returning);
    const rows = await collectTargets(run, target);
    const exec = run.exec();
    const returningEvals = returning?.exprs.map((e) => compile(e, exec)) ?? [];
    const writer = run.writer.writer(table);
    const out: QValue[][] = [];
    let affected = 0;
    for (const row of rows) {
      const { key, image, values } = keyOf(row, target.width);
      if (!(await writer.delete(key, image, values))) continue;
      affected += 1;
      if (returning) out.push(returningRow(returningEvals, row));
    }
    return { affected, returning: returning ? { ...returning, rows: out } : null };
  });
}
