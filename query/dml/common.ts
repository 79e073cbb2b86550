import type { TableDef } from '../../core/catalog.js';
import type { SvcError } from '../../core/errors.js';
import type { CatalogState, Projections, WriteView } from '../../projections/index.js';
import {
  bindCheck,
  bindExpr,
  bindFunction,
  invalid,
  outputName,
  QueryBinder,
  resolveUnknown,
  tableScope,
  uniqueNames,
  type BindContext,
  type ExprEnv,
  type Scope,
} from '../bind/index.js';
import { compile, WriteViewSource, type ExecContext } from '../exec/index.js';
import { parseExpression, type ParsedStatement, type QualifiedName, type SelectTarget, type WithClause } from '../parse/index.js';
import type { Expr } from '../plan/expr.js';
import { holdsMomentConstant } from '../plan/expr-util.js';
import { convertParams, fillParamTypes } from '../prepare.js';
import { emptyResult, RowConverter, type QueryResult } from '../result.js';
import { execContext } from '../run-query.js';
import type { StatementEnv } from '../statement.js';
import type { QValue, TypeSystem } from '../types/contract.js';
import { txnRecord } from '../ddl/common.js';
import type { TxnRecord } from '../../core/log-records.js';
import { StatementWriter, type WriteCounts } from './statement-writer.js';
import type { CheckEval } from './writer.js';

export interface DmlDeps {
  readonly projections: Projections;
  readonly types: TypeSystem;
  readonly env: StatementEnv;
  readonly statement: ParsedStatement;
  bindContext(catalog: CatalogState): BindContext;
  /** The engine's counts of how rows were written (SqlEngine.insertPathStats()). */
  readonly writeCounts: WriteCounts;
}

/** What a DML body works with inside the sequencer's builder. */
export interface DmlRun {
  readonly view: WriteView;
  readonly ctx: BindContext;
  readonly writer: StatementWriter;
  readonly binder: QueryBinder;
  /** An execution context reading through the view; call after binding (it converts the parameters). */
  exec(): ExecContext;
  /**
   * The request's parameters converted to the types binding inferred for $1..$n: exec()'s params,
   * converted once per statement (call after binding). A VALUES row of parameters reads them without
   * an execution context.
   */
  params(): readonly QValue[];
}

export interface DmlOutcome {
  readonly affected: number;
  readonly returning: { readonly names: readonly string[]; readonly exprs: readonly Expr[]; readonly rows: QValue[][] } | null;
}

/** Runs a DML body as ONE sequencer submit: all rows of the statement in one log record, or nothing. */
export async function submitDml(deps: DmlDeps, command: string, body: (run: DmlRun) => DmlOutcome | Promise<DmlOutcome>): Promise<QueryResult> {
  let outcome: DmlOutcome | null = null;
  const { sequencer } = deps.projections;
  const txn = deps.env.txn;
  // What the statement appends, once its body has run (staged in its transaction instead, if any).
  const built = (run: StatementRun, done: DmlOutcome): { record: TxnRecord; result: null } | null => {
    outcome = done;
    const writer = run.writer;
    if (writer.ops.length === 0) return null;
    // Without sequence values the writer's own list is the record's (the writer is dropped after this): no copy.
    const ops = writer.hasSequences ? [...writer.ops, ...writer.sequenceOps()] : writer.ops;
    if (txn) {
      txn.stage(ops, run.view.catalog);
      return null;
    }
    return { record: txnRecord(deps.env.tenant, ops), result: null };
  };
  // Not an async builder: a body whose outcome is there at once (a single-row insert of given values)
  // costs no async frame, promise and turn of its own here, nor in the sequencer (TxnBuilder). A throw
  // is still the submit's rejection: the sequencer calls the builder inside its try.
  await sequencer.submit((sequencerView) => {
    // In a transaction the statement sees the transaction's changes, and they stay staged in it.
    const view = txn ? txn.dmlView(sequencerView, sequencer.headLsn) : sequencerView;
    const run = new StatementRun(deps, view, txn !== null);
    const done = body(run);
    return done instanceof Promise ? done.then((settled) => built(run, settled)) : built(run, done);
  });
  const done = outcome as DmlOutcome | null;
  if (!done) return emptyResult(command, 0);
  if (!done.returning) return emptyResult(command, done.affected);
  const { names, exprs, rows } = done.returning;
  const converter = new RowConverter(
    deps.types,
    names,
    exprs.map((e) => e.type),
  );
  return {
    command,
    columns: exprs.map((e, i) => ({ name: names[i]!, type: deps.types.typeText(e.type), nullable: true })),
    rows: rows.map((r) => converter.convert(r)),
    rowCount: rows.length,
    affectedRows: done.affected,
    truncated: false,
  };
}

/**
 * A DmlRun: the binder and the execution context are made when first asked (a single-row insert of
 * given values, JSON rows or a kept binding, needs neither: a QueryBinder with its deps and
 * closures per statement was allocation for nothing). Getters of a class, not of an object
 * literal: a literal with an accessor is made through V8's slow path on every statement.
 */
class StatementRun implements DmlRun {
  readonly ctx: BindContext;
  readonly writer: StatementWriter;
  private queryBinder: QueryBinder | null = null;
  private execCtx: ExecContext | null = null;
  private converted: readonly QValue[] | null = null;

  constructor(
    private readonly deps: DmlDeps,
    readonly view: WriteView,
    inTransaction: boolean,
  ) {
    this.ctx = deps.bindContext(view.catalog);
    const checksOf = (table: TableDef): CheckEval[] => compileChecks(table, this.ctx, () => this.exec());
    this.writer = new StatementWriter(view, deps.types, checksOf, deps.env.limits.dmlRowsMax, inTransaction, deps.writeCounts);
  }

  get binder(): QueryBinder {
    this.queryBinder ??= new QueryBinder(this.ctx);
    return this.queryBinder;
  }

  exec(): ExecContext {
    const { deps } = this;
    this.execCtx ??= execContext({
      types: deps.types,
      source: new WriteViewSource(this.view),
      deadlineMs: deps.env.deadlineMs,
      signal: deps.env.signal,
      stats: null,
      materializedRowsMax: deps.env.limits.materializedRowsMax,
      params: this.params(),
    });
    return this.execCtx;
  }

  params(): readonly QValue[] {
    this.converted ??= convertParams(this.deps.types, fillParamTypes(this.ctx.paramTypes), this.deps.env.params);
    return this.converted;
  }
}

/**
 * Bound CHECK expressions by table definition: a definition never changes (DDL makes a new one), so
 * each is parsed and bound once — unless one holds a date/time constant (`CHECK (at <= 'now')` is
 * read per statement, as DEFAULT 'now' is): then bound again for every statement.
 */
const boundChecks = new WeakMap<TableDef, readonly { name: string; expr: Expr }[]>();

function compileChecks(table: TableDef, ctx: BindContext, exec: () => ExecContext): CheckEval[] {
  let checks = boundChecks.get(table);
  if (!checks) {
    checks = table.constraints.filter((c) => c.kind === 'check').map((c) => ({ name: c.name, expr: bindCheck(ctx, table, parseExpression(c.definition)) }));
    if (!checks.some((c) => holdsMomentConstant(c.expr))) boundChecks.set(table, checks);
  }
  // No CHECK: no execution context is made for it (a single-row insert of given values needs none).
  if (checks.length === 0) return [];
  return checks.map(({ name, expr }) => {
    const compiled = compile(expr, exec());
    return { name, eval: (row: readonly QValue[]) => compiled.eval(row as QValue[]) };
  });
}

export function exprEnv(run: DmlRun, scope: Scope, clause: string): ExprEnv {
  const base = run.binder.env(scope, clause, false);
  return { ...base, bindFunction };
}

/** The target table of a DML statement (a table, not a view). */
export function targetTable(ctx: BindContext, name: QualifiedName): TableDef {
  const def = ctx.table(name.schema, name.name).def;
  if (def.kind !== 'table') throw notWritable(def);
  return def;
}

/** PostgreSQL's refusal to change a view's or a materialized view's rows. */
export function notWritable(def: TableDef): SvcError {
  if (def.kind === 'materialized_view') return invalid(`cannot change materialized view "${def.name}"`, { table: def.name, sqlstate: '42809' });
  return invalid(`cannot change rows of view "${def.name}"`, { table: def.name });
}

/** RETURNING items bound over the table's row (columns in table order). */
export function bindReturning(run: DmlRun, table: TableDef, alias: string, items: readonly SelectTarget[] | null): { names: string[]; exprs: Expr[] } | null {
  return bindReturningIn(run, tableScope(table, alias), items);
}

/** RETURNING items bound over a scope (UPDATE ... FROM / DELETE ... USING see every FROM item). */
export function bindReturningIn(run: DmlRun, scope: Scope, items: readonly SelectTarget[] | null): { names: string[]; exprs: Expr[] } | null {
  if (!items || items.length === 0) return null;
  const env = exprEnv(run, scope, 'RETURNING');
  const names: string[] = [];
  const exprs: Expr[] = [];
  for (const item of items) {
    const node = item.expr;
    if (node.kind === 'column_ref' && node.column === null) {
      const only = node.qualifier.length > 0 ? node.qualifier[node.qualifier.length - 1]! : null;
      for (const entry of scope.entries) {
        if (only !== null && entry.alias !== only) continue;
        entry.columns.forEach((c, i) => {
          if (c.hidden) return;
          names.push(c.name);
          exprs.push({ kind: 'column', type: c.type, index: entry.offset + i, name: c.name });
        });
      }
      continue;
    }
    exprs.push(resolveUnknown(run.ctx, bindExpr(node, env)));
    names.push(item.alias ?? outputName(node));
  }
  return { names: uniqueNames(names), exprs };
}

/** Evaluates RETURNING expressions for one row. */
export function returningRow(compiled: ReturnType<typeof compile>[], row: readonly QValue[]): QValue[] {
  return compiled.map((c) => c.eval(row as QValue[]));
}

/** Data-modifying statements with their own WITH clause: not supported yet (a clear error, never a wrong answer). */
export function refuseWith(clause: WithClause | null): void {
  if (clause) throw invalid('WITH on INSERT, UPDATE and DELETE is not supported; use a subquery', { reason: 'unsupported' });
}

export function emptyOutcome(affected: number): DmlOutcome {
  return { affected, returning: null };
}

export const NO_RESULT = emptyResult;
