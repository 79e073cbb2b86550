import { assert } from '../core/errors.js';
import { LIMITS } from './limits.js';
import type { ParsedStatement } from './parse/index.js';
import { convertParams, newBindContext, type PlanCache, prepareQuery, type PreparedQuery } from './prepare.js';
import { RowConverter, type QueryResult, type ResultColumn } from './result.js';
import { collectPlan, openSnapshot, planBatches, type ReadScope, type RunOptions } from './run-query.js';
import type { SqlEngineDeps, StatementEnv } from './statement.js';
import { rowStream, type RowStream } from './stream.js';

/** How a prepared SELECT's rows leave the engine: its converter and result columns. */
export interface SelectOutput {
  readonly converter: RowConverter;
  readonly columns: readonly ResultColumn[];
}

/**
 * The engine's SELECTs through the executor: a statement's plan prepared (from the plan cache while
 * the tables it read are unchanged), its rows collected up to the statement's bound or pulled as a
 * stream, from its transaction's view or a snapshot taken now.
 */
export class SelectRunner {
  /** What a prepared SELECT's rows are converted with, made once per plan. */
  private readonly outputs = new WeakMap<PreparedQuery, SelectOutput>();

  constructor(
    private readonly deps: SqlEngineDeps,
    private readonly cache: PlanCache,
  ) {}

  /** The prepared plan of a SELECT: from the cache when the tables it read are unchanged. */
  prepared(statement: ParsedStatement, env: StatementEnv): PreparedQuery {
    const catalog = this.deps.projections.catalog;
    const cacheable = statement.text.length <= LIMITS.planCacheTextBytesMax;
    const key = `${env.tenant}\u0000${statement.text}`;
    const cached = cacheable ? this.cache.get(key, catalog) : undefined;
    if (cached) return cached;
    const prepared = prepareQuery(queryOf(statement), newBindContext(this.deps.types, catalog, env.tenant, statement), catalog);
    if (cacheable) this.cache.set(key, prepared);
    return prepared;
  }

  /** A SELECT collected through its plan: at most env.maxRows rows, truncated when more were there. */
  async collect(prepared: PreparedQuery, env: StatementEnv): Promise<QueryResult> {
    const { converter, columns } = this.outputOf(prepared);
    const { rows, truncated } = await collectPlan(
      prepared.plan,
      this.runOptions(prepared, env),
      this.readScope(env),
      (row) => converter.convert(row),
      env.maxRows,
    );
    return { command: 'SELECT', columns: [...columns], rows, rowCount: rows.length, affectedRows: null, truncated };
  }

  /** The one way a SELECT's rows leave the engine as a stream: pulled from its plan, in batches. */
  stream(prepared: PreparedQuery, env: StatementEnv, batchRows: number): RowStream {
    const { converter, columns } = this.outputOf(prepared);
    const options = this.runOptions(prepared, env);
    const open = this.readScope(env);
    return rowStream({
      command: 'SELECT',
      columns,
      affectedRows: null,
      cut: false,
      batches: () => planBatches(prepared.plan, options, open, (row) => converter.convert(row), batchRows),
    });
  }

  /** The converter and result columns of a prepared SELECT, made on its first run. */
  outputOf(prepared: PreparedQuery): SelectOutput {
    let output = this.outputs.get(prepared);
    if (!output) {
      const { types } = this.deps;
      const planColumns = prepared.plan.columns;
      output = {
        converter: new RowConverter(
          types,
          prepared.names,
          planColumns.map((c) => c.type),
        ),
        columns: planColumns.map((c, i) => ({ name: prepared.names[i]!, type: types.typeText(c.type), nullable: c.nullable })),
      };
      this.outputs.set(prepared, output);
    }
    return output;
  }

  /** How a SELECT's plan runs for this statement: its parameters converted, the statement's bounds. */
  private runOptions(prepared: PreparedQuery, env: StatementEnv): Omit<RunOptions, 'source'> {
    const { types } = this.deps;
    return {
      types,
      params: convertParams(types, prepared.paramTypes, env.params),
      deadlineMs: env.deadlineMs,
      signal: env.signal,
      stats: null,
      materializedRowsMax: env.limits.materializedRowsMax,
      scanCache: env.scanCache,
      efSearch: env.efSearch,
    };
  }

  /** Where a SELECT reads: its transaction's view, or a snapshot of the store taken now. */
  private readScope(env: StatementEnv): () => ReadScope {
    const { projections } = this.deps;
    const txn = env.txn;
    return txn ? () => txn.openReadSource(projections.store, projections.vectors) : () => openSnapshot(projections.store, projections.vectors);
  }
}

/** The query of a SELECT statement (the engine checked its kind). */
function queryOf(statement: ParsedStatement) {
  assert(statement.body.kind === 'query', 'a prepared statement is a query');
  return statement.body.query;
}
