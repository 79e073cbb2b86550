import type { IndexDef, TableDef } from '../../core/catalog.js';
import { SvcError, columnNotFound } from '../../core/errors.js';
import { decodeRowInto } from '../../core/row-codec.js';
import { asCondition, bindExpr, invalid, Scope } from '../bind/index.js';
import { compile, prepare } from '../exec/index.js';
import type { InsertStatement, OnConflict, QualifiedName } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import type { QueryResult } from '../result.js';
import type { QType, QValue } from '../types/contract.js';
import { bindReturning, exprEnv, notWritable, refuseWith, returningRow, submitDml, type DmlDeps, type DmlOutcome, type DmlRun } from './common.js';
import { bindValues, boundValuesRows, insertRows, isPlainValues, plainValuesRows, valuesRows, type Cell } from './row-source.js';
import { bindAssignments } from './assignments.js';

export interface Conflict {
  /** Indexes whose conflict triggers the action (all unique ones when no target is given). */
  readonly indexes: readonly IndexDef[];
  readonly update: { readonly sets: { position: number; expr: Expr }[]; readonly where: Expr | null } | null;
}

/** INSERT ... VALUES | SELECT [ON CONFLICT ...] [RETURNING ...]: one log record. */
export function insert(ast: InsertStatement, deps: DmlDeps): Promise<QueryResult> {
  return submitDml(deps, 'INSERT', (run) => bindAndInsert(ast, run));
}

/**
 * An INSERT ... VALUES bound against one table definition: everything a run needs but its
 * parameter values. Running it again (runBoundValues) is the same as binding the statement again
 * while that definition is current (fast-insert.ts checks that).
 */
export interface BoundValuesInsert {
  readonly table: TableDef;
  readonly targets: readonly number[];
  readonly rows: readonly (readonly Cell[])[];
  readonly conflict: Conflict | null;
  readonly returning: { names: string[]; exprs: Expr[] } | null;
  /** Types of $1..$n inferred by the binding (holes: not inferred). */
  readonly paramTypes: readonly (QType | undefined)[];
}

/**
 * Binds and runs one INSERT; `onBound` sees the binding of a VALUES insert before it runs. Without
 * it nobody keeps the binding: a VALUES list is bound straight into its rows (boundValuesRows).
 */
export async function bindAndInsert(ast: InsertStatement, run: DmlRun, onBound?: (bound: BoundValuesInsert) => void): Promise<DmlOutcome> {
  refuseWith(ast.with);
  if (ast.overriding) throw invalid('OVERRIDING ... VALUE is not supported (svcdb has no identity columns)', { reason: 'unsupported' });
  const table = targetOf(run, ast.table);
  const alias = ast.alias ?? table.name;
  const targets = targetColumns(table, ast.columns);
  const conflict = ast.onConflict ? bindConflict(run, table, alias, ast.onConflict) : null;
  const returning = bindReturning(run, table, alias, ast.returning);
  if (ast.source !== null && isPlainValues(ast.source)) {
    if (onBound === undefined)
      return writeProposed(run, table, await boundValuesRows(run, table, targets, ast.source, ast.columns !== null), conflict, returning);
    const rows = bindValues(run, table, targets, ast.source, ast.columns !== null);
    const bound = { table, targets, rows, conflict, returning, paramTypes: [...run.ctx.paramTypes] };
    onBound?.(bound);
    return runBoundValues(run, bound);
  }
  const proposed: QValue[][] = [];
  await insertRows(run, table, targets, ast.source, ast.columns !== null, (values) => {
    proposed.push(values);
  });
  return writeProposed(run, table, proposed, conflict, returning);
}

/**
 * Runs a bound VALUES insert: its rows evaluated (parameters, defaults), validated and written.
 * Rows of constants and parameters are evaluated without a promise (plainValuesRows), and a single
 * row whose checks need no read is then written at once: its outcome is returned as it is (no
 * async frame, promise or turn per prepared INSERT; what throws then throws here, and the
 * sequencer's builder that awaits this makes it the statement's rejection).
 */
export function runBoundValues(run: DmlRun, bound: BoundValuesInsert): DmlOutcome | Promise<DmlOutcome> {
  const plain = plainValuesRows(run, bound.table, bound.targets, bound.rows);
  if (plain !== null) return writeProposed(run, bound.table, plain, bound.conflict, bound.returning);
  return runComputedValues(run, bound);
}

/** runBoundValues of rows with a cell to compute (an expression, a missing parameter): valuesRows. */
async function runComputedValues(run: DmlRun, bound: BoundValuesInsert): Promise<DmlOutcome> {
  const proposed: QValue[][] = [];
  await valuesRows(run, bound.table, bound.targets, bound.rows, (values) => {
    proposed.push(values);
  });
  return writeProposed(run, bound.table, proposed, bound.conflict, bound.returning);
}

/**
 * Validates and writes the proposed full rows (table column order) of one INSERT, with its ON
 * CONFLICT action and RETURNING items (bound over the table's row): what every INSERT path shares.
 * A single row whose checks need no read is written at once and its outcome returned as it is
 * (no promise: the caller awaits it inside the sequencer's builder either way).
 */
export function writeProposed(
  run: DmlRun,
  table: TableDef,
  proposed: readonly QValue[][],
  conflict: Conflict | null,
  returning: { names: string[]; exprs: Expr[] } | null,
): DmlOutcome | Promise<DmlOutcome> {
  if (!conflict && !returning && proposed.length === 1 && run.writer.writer(table).insertKnownNew(proposed[0]!)) return { affected: 1, returning: null };
  return writeProposedRows(run, table, proposed, conflict, returning);
}

async function writeProposedRows(
  run: DmlRun,
  table: TableDef,
  proposed: readonly QValue[][],
  conflict: Conflict | null,
  returning: { names: string[]; exprs: Expr[] } | null,
): Promise<DmlOutcome> {
  if (!conflict) return writeAll(run, table, proposed, returning);
  const exec = run.exec();
  const setEvals = conflict?.update?.sets.map((s) => ({ position: s.position, eval: compile(s.expr, exec) })) ?? [];
  const whereEval = conflict?.update?.where ? compile(conflict.update.where, exec) : null;
  const returningEvals = returning?.exprs.map((e) => compile(e, exec)) ?? [];
  const rows: QValue[][] = [];
  const touched = new Set<string>();
  const hexOf = (k: Uint8Array): string => Buffer.from(k).toString('hex');
  let affected = 0;
  const writer = run.writer.writer(table);
  await writer.prefetch(proposed);
  for (const values of proposed) await handle(values);
  return { affected, returning: returning ? { ...returning, rows } : null };

  async function handle(values: QValue[]): Promise<void> {
    if (conflict) {
      const key = await findConflict(run, table, conflict, values);
      if (key) {
        if (!conflict.update) return;
        if (touched.has(hexOf(key))) {
          throw new SvcError('CONSTRAINT_VIOLATION', 'ON CONFLICT DO UPDATE command cannot affect row a second time', {
            table: table.name,
            hint: 'Ensure that no rows proposed for insertion within the same command have duplicate constrained values.',
          });
        }
        const image = (await writer.current(key))!;
        const existing = decodeRowInto(
          image,
          table.columns.map((c) => c.id),
          table.columns.map((c) => c.missingValue),
        ) as QValue[];
        const combined = [...existing, ...values];
        // Subqueries of SET and WHERE run per conflicting row (they may refer to it).
        await prepare([...setEvals.map((s) => s.eval), ...(whereEval ? [whereEval] : [])], combined, exec);
        if (whereEval && whereEval.eval(combined) !== true) return;
        const next = [...existing];
        for (const s of setEvals) next[s.position] = s.eval.eval(combined);
        await writer.update(key, image, existing, next);
        touched.add(hexOf(writer.pkPositions ? writer.keyOf(next) : key));
        affected += 1;
        if (returning) rows.push(returningRow(returningEvals, next));
        return;
      }
    }
    const key = await writer.insert(values);
    // Only ON CONFLICT DO UPDATE asks which rows this statement touched: no hex key per row otherwise.
    if (conflict?.update) touched.add(hexOf(key));
    affected += 1;
    if (returning) rows.push(returningRow(returningEvals, values));
  }
}

/** writeProposed without ON CONFLICT: every row is inserted or the statement fails (TableWriter.insertMany). */
async function writeAll(
  run: DmlRun,
  table: TableDef,
  proposed: readonly QValue[][],
  returning: { names: string[]; exprs: Expr[] } | null,
): Promise<DmlOutcome> {
  const writer = run.writer.writer(table);
  if (!returning) {
    await writer.insertMany(proposed);
    return { affected: proposed.length, returning: null };
  }
  const exec = run.exec();
  const returningEvals = returning.exprs.map((e) => compile(e, exec));
  const rows: QValue[][] = [];
  await writer.insertMany(proposed, (values) => rows.push(returningRow(returningEvals, values)));
  return { affected: proposed.length, returning: { ...returning, rows } };
}

function targetOf(run: DmlRun, name: QualifiedName): TableDef {
  const def = run.ctx.table(name.schema, name.name).def;
  if (def.kind === 'materialized_view') throw notWritable(def);
  if (def.kind !== 'table') throw invalid(`cannot insert into view "${def.name}"`, { table: def.name });
  return def;
}

function targetColumns(table: TableDef, columns: readonly string[] | null): number[] {
  if (!columns) return table.columns.map((_c, i) => i);
  const out: number[] = [];
  for (const name of columns) {
    const at = table.columns.findIndex((col) => col.name === name);
    if (at < 0) throw columnNotFound(name, { relation: table.name });
    if (out.includes(at)) throw invalid(`column "${name}" specified more than once`, { column: name });
    out.push(at);
  }
  return out;
}

function bindConflict(run: DmlRun, table: TableDef, alias: string, node: OnConflict): Conflict {
  let indexes = table.indexes.filter((i) => i.unique && i.kind === 'btree');
  if (node.inferenceWhere) throw invalid('ON CONFLICT (...) WHERE (partial unique indexes) is not supported', { reason: 'unsupported' });
  if (node.constraint !== null) {
    const match = indexes.find((i) => i.name === node.constraint);
    if (!match) throw invalid(`constraint "${node.constraint}" for table "${table.name}" does not exist`, { constraint: node.constraint });
    indexes = [match];
  } else if (node.columns && node.columns.length > 0) {
    const ids = node.columns.map((n) => {
      const col = table.columns.find((c) => c.name === n);
      if (!col) throw columnNotFound(n);
      return col.id;
    });
    const match = indexes.find((i) => i.columnIds.length === ids.length && ids.every((id) => i.columnIds.includes(id)));
    if (!match) throw invalid('there is no unique or exclusion constraint matching the ON CONFLICT specification');
    indexes = [match];
  }
  if (node.action !== 'update') return { indexes, update: null };
  if (node.constraint === null && !(node.columns && node.columns.length > 0)) {
    throw invalid('ON CONFLICT DO UPDATE requires inference specification or constraint name');
  }
  const scope = new Scope(null);
  const cols = table.columns.map((c) => ({ name: c.name, type: c.type, nullable: c.nullable }));
  scope.add(alias, cols, table.name);
  scope.add('excluded', cols);
  const env = exprEnv(run, scope, 'ON CONFLICT DO UPDATE');
  const sets = bindAssignments(run, table, env, alias, node.set, 'ON CONFLICT DO UPDATE');
  const where = node.where ? asCondition(run.ctx, bindExpr(node.where, env), 'WHERE') : null;
  return { indexes, update: { sets, where } };
}

async function findConflict(run: DmlRun, table: TableDef, conflict: Conflict, values: QValue[]): Promise<Uint8Array | null> {
  const writer = run.writer.writer(table);
  for (const index of conflict.indexes) {
    const key = await writer.conflicting(index, values);
    if (key) return key;
  }
  return null;
}
