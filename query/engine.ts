import { assert, SvcError } from '../core/errors.js';
import { DEFAULT_TENANT } from '../core/catalog.js';
import type { CatalogState, ReadBarrier } from '../projections/index.js';
import { type BindContext } from './bind/index.js';
import { executeDdl } from './ddl/index.js';
import { InsertCache } from './fast-insert.js';
import { insertJson, JSON_INSERT_STATEMENT, type JsonInsert } from './dml/insert-json.js';
import { parseDdlBatch, runDdlBatch } from './ddl/batch.js';
import { remove, update } from './dml/update-delete.js';
import { WriteCounts } from './dml/statement-writer.js';
import type { DmlDeps } from './dml/common.js';
import { explainStatement, explainQuery, type ExplainOptionsInput, type ExplainResult } from './explain/index.js';
import { DEFAULT_SQL_LIMITS, LIMITS, READ_TIMEOUT_MS_DEFAULT, type SqlLimits } from './limits.js';
import { parseSql, type ParsedStatement } from './parse/index.js';
import { statementEnv, withinTransaction, type ExecuteOptions, type StreamOptions } from './engine-options.js';
import { untilApplied } from './barrier-wait.js';
import { ddlInTransaction, isCdcStatement, refuseInTransaction, refuseWrite, transactionControl } from './statement-guards.js';
import { executeCdc } from './cdc/statements.js';
import type { CdcRuntime } from './cdc/runtime.js';
import { newBindContext, PlanCache, type PreparedQuery } from './prepare.js';
import { PlainSelectKeys, plainSelectKey } from './plain-select-key.js';
import { emptyResult, type JsonRow, type QueryResult } from './result.js';
import type { KeyRead, KeyReadResult } from './point-read.js';
import { KeyReads } from './key-reads.js';
import { PointSelects, type RowsFrame } from './fast-point.js';
import { RowShapes, type AnswerWrap } from './row-shapes.js';
import { VectorSelects, type VectorSelectEnv } from './fast-vector.js';
import { ParseCache } from './parse-cache.js';
import { ScanCache } from './exec/scan-cache.js';
import { SelectRunner } from './select-runner.js';
import type { SqlEngineDeps, StatementEnv } from './statement.js';
import { sliceStream, type RowStream } from './stream.js';
import type { TxnContext } from './txn/context.js';
import { atomicBatch } from './txn/batch.js';
import type { TxnScope } from './txn/scope.js';

export type { ExecuteOptions, ReadOnlyReason, StreamOptions, TransactionRef } from './engine-options.js';

/**
 * The SQL engine: parse -> bind -> plan -> optimize -> execute over the projections, writes
 * through the sequencer. Built once by the composition root.
 */
export class SqlEngine {
  private readonly limits: SqlLimits;
  private readonly cache: PlanCache;
  private readonly parses: ParseCache;
  /** SELECTs prepared (through the plan cache), collected or streamed (select-runner.ts). */
  private readonly selects: SelectRunner;
  private readonly scanCache: ScanCache | null;
  /** Bindings of INSERT ... VALUES statements sent again (fast-insert.ts). */
  private readonly inserts = new InsertCache();
  /** Where statements of transactions run (the transaction manager); null: each statement on its own. */
  private readonly transactions: TxnScope | null;
  private cdcRuntime: CdcRuntime | null = null;
  /**
   * Rows of a table's columns as GET row and the point SELECT answer them (row-shapes.ts): one per
   * table definition and column list, so both keep what they made of a cached row under the same owner.
   */
  private readonly shapes: RowShapes;
  /** SELECTs by whole primary key, answered with one synchronous store read (fast-point.ts). */
  private readonly points: PointSelects;
  /** hnsw top-k SELECTs, answered without the executor (fast-vector.ts). */
  private readonly vectorSelects: VectorSelects;
  /** How DML statements wrote their rows (insertPathStats). */
  private readonly writeCounts = new WriteCounts();
  /** The plan cache's keys of plain SELECT texts, the last one kept (plain-select-key.ts). */
  private readonly plainKeys = new PlainSelectKeys();
  /**
   * Where every read begins (projections/read-barrier.ts): a row write is answered once durable, and
   * a read waits here while a write answered before it is not applied yet by the projections it
   * reads: the tables projection for reads of rows, the vector graphs too for a search of an hnsw
   * index (untilApplied). DML does not wait: it reads through the writer's view, which holds those records.
   */
  private readonly barrier: ReadBarrier;
  /** The reads that are not statements, behind the same barrier (key-reads.ts): readByKey, readTextByKey, settled. */
  private readonly keyReads: KeyReads;

  constructor(private readonly deps: SqlEngineDeps) {
    this.barrier = deps.projections.readBarrier;
    this.shapes = new RowShapes(deps.types);
    this.points = new PointSelects(deps.projections.store, deps.types, this.shapes);
    this.vectorSelects = new VectorSelects(deps.projections.store, deps.projections.vectors, deps.types);
    this.limits = deps.limits ?? DEFAULT_SQL_LIMITS;
    // Their routes give them no timeout: a wait at the barrier lasts at most the default read timeout.
    this.keyReads = new KeyReads(deps.projections.store, deps.types, this.shapes, this.barrier, this.limits.readTimeoutMsDefault ?? READ_TIMEOUT_MS_DEFAULT);
    this.cache = new PlanCache(this.limits.planCacheEntriesMax);
    this.selects = new SelectRunner(deps, this.cache);
    this.parses = new ParseCache(this.limits.planCacheEntriesMax);
    const { scanCacheRowsMax, scanCacheBytesMax } = this.limits;
    this.scanCache = scanCacheRowsMax > 0 && scanCacheBytesMax > 0 ? new ScanCache(scanCacheRowsMax, scanCacheBytesMax) : null;
    this.transactions = deps.transactions ?? null;
  }

  /** What the scan cache holds and how often it served a scan (exec/scan-cache.ts). */
  scanCacheStats(): Readonly<ScanCache['counts'] & ScanCache['size']> {
    if (!this.scanCache) return { hits: 0, fills: 0, patches: 0, aggregates: 0, tables: 0, rows: 0, bytes: 0 };
    return { ...this.scanCache.counts, ...this.scanCache.size };
  }

  /** How often an INSERT ran from its cached binding, and how many bindings were kept (fast-insert.ts). */
  insertCacheStats(): { readonly hits: number; readonly binds: number } {
    return { ...this.inserts.counts };
  }

  /**
   * For readers of what the projections keep outside SQL (a table's row count and sizes, in the
   * catalog's stats, which the tables projection updates as it applies writes): undefined when the
   * tables projection applied every write answered so far, else a promise that resolves once it
   * has. Await it, then read the catalog entry. (Not the vector projection: the stats are not its.)
   * It rejects with QUERY_TIMEOUT past limits.readTimeoutMsDefault, as a SELECT waiting that long would.
   */
  settled(): Promise<void> | undefined {
    return this.keyReads.settled();
  }

  /**
   * A row by primary key without SQL (point-read.ts): null when there is none, undefined when only
   * execute() can answer. Synchronous where the store reads synchronously (a promise otherwise).
   * Behind the read barrier it waits for the apply, at most limits.readTimeoutMsDefault (then QUERY_TIMEOUT).
   */
  readByKey(read: KeyRead): KeyReadResult | Promise<KeyReadResult> {
    return this.keyReads.read(read);
  }

  /**
   * readByKey's row as the JSON text `toText` writes (the same text for the same row, every time),
   * inside `wrap` when given (the whole answer): kept with the point-read cache's entry, shared with
   * point SELECTs of the same columns written by the same `toText`, so a row read again is not decoded
   * nor written again.
   */
  readTextByKey(read: KeyRead, toText: (row: JsonRow) => string, wrap?: AnswerWrap): string | null | undefined | Promise<string | null | undefined> {
    return this.keyReads.readText(read, toText, wrap);
  }

  /**
   * A statement whose cached plan is a point SELECT (fast-point.ts), answered now; undefined: only
   * execute() answers (not cached yet, another statement, a transaction). Same result and errors as execute().
   * With `toText` (the same text for the same row, every time) the result has `rowsText`, its rows as
   * a JSON array (inside `frame` when given: the whole answer kept with the row), and its row is
   * frozen and shared with other answers of the same stored row.
   */
  pointSelect(
    sql: string,
    options: ExecuteOptions,
    toText?: (row: JsonRow) => string,
    frame?: RowsFrame,
  ): (QueryResult & { readonly rowsText?: string }) | undefined {
    const known = this.cachedPoint(sql, options);
    if (known === undefined) return undefined;
    return this.pointResult(known, options.params ?? [], Math.min(options.maxRows, this.limits.resultRowsMax), toText, frame);
  }

  /**
   * pointSelect's answer as text alone (`toText` of its row inside `frame`: the whole answer, kept with
   * the row), or undefined where pointSelect is: for a caller that sends the text and nothing else
   * (POST /query without metadata). No result object is made, and a row whose answer text GET row
   * kept is not decoded again for rows nobody reads.
   */
  pointSelectText(sql: string, options: ExecuteOptions, toText: (row: JsonRow) => string, frame: RowsFrame): string | undefined {
    const known = this.cachedPoint(sql, options);
    if (known === undefined) return undefined;
    const { converter } = this.selects.outputOf(known);
    const rowsMax = Math.min(options.maxRows, this.limits.resultRowsMax);
    return this.points.rows(known, options.params ?? [], (row) => converter.convert(row), rowsMax, toText, frame, true).rowsText;
  }

  /** The cached plan of `sql` when it is a point SELECT the direct path answers (pointSelect, pointSelectText); else undefined. */
  private cachedPoint(sql: string, options: ExecuteOptions): PreparedQuery | undefined {
    if (options.transaction !== undefined || options.efSearch !== undefined || options.signal?.aborted) return undefined;
    const known = this.cache.get(this.plainKeys.of(options.tenant, sql), this.deps.projections.catalog);
    if (known === undefined || !this.points.handles(known)) return undefined;
    // Behind the read barrier for its table (a point read reads the store alone): execute() answers, after waiting for the apply.
    return this.barrier.tablesBehind && this.barrier.tablesBehindOf(known.tablesUsed.keys()) ? undefined : known;
  }

  private pointResult(
    prepared: PreparedQuery,
    params: readonly unknown[],
    rowsMax: number,
    toText?: (row: JsonRow) => string,
    frame?: RowsFrame,
  ): QueryResult & { readonly rowsText?: string } {
    const { converter, columns } = this.selects.outputOf(prepared);
    const { rows, truncated, rowsText } = this.points.rows(prepared, params, (row) => converter.convert(row), rowsMax, toText, frame);
    if (rowsText === undefined) return { command: 'SELECT', columns: [...columns], rows, rowCount: rows.length, affectedRows: null, truncated };
    return { command: 'SELECT', columns: [...columns], rows, rowCount: rows.length, affectedRows: null, truncated, rowsText };
  }

  /**
   * True when running `sql` never reads options.signal (an INSERT ... VALUES of parameters and
   * literals whose binding is kept, outside a transaction): a caller need not make a signal for it.
   * Only a text run before answers true; anything else is false (the general path honours the signal).
   */
  ignoresCancel(sql: string, options: ExecuteOptions): boolean {
    if (options.transaction !== undefined) return false;
    const statements = this.parses.peek(sql);
    if (statements === undefined || statements.length !== 1) return false;
    const only = statements[0]!;
    return only.body.kind === 'insert' && !only.explain && this.inserts.holds(only);
  }

  /**
   * A prepared INSERT ... VALUES (ignoresCancel's statements) run straight to its insert: what
   * execute() does for it (the text's limit, the parse cache's use, a read-only refusal, the insert),
   * without the layers only other statements need. undefined: execute() runs it. May throw at once.
   */
  preparedInsert(sql: string, options: ExecuteOptions): Promise<QueryResult> | undefined {
    if (!this.ignoresCancel(sql, options)) return undefined;
    const env = this.envOf(sql, options);
    const statement = this.parses.parse(sql)[0]!;
    const body = statement.body;
    if (body.kind !== 'insert') return undefined;
    if (env.readOnly) refuseWrite(statement, env.readOnly);
    const deps = this.dmlDeps(env, statement, statement);
    return this.inserts.run(statement, body, deps);
  }

  /**
   * A statement whose cached plan is an hnsw top-k (fast-vector.ts), answered without the
   * executor; undefined: only execute() answers (not cached yet, another statement, a
   * transaction). Same result and errors as execute(), which it runs itself when the direct
   * search finds fewer than k rows.
   */
  vectorSelect(sql: string, options: ExecuteOptions): Promise<QueryResult> | undefined {
    if (options.transaction !== undefined || options.signal?.aborted) return undefined;
    const known = this.cache.get(this.plainKeys.of(options.tenant, sql), this.deps.projections.catalog);
    if (!known || !this.vectorSelects.handles(known)) return undefined;
    return this.vectorResult(known, sql, options);
  }

  /** How many single-row inserts of a new highest key were staged without a read or a promise (TableWriter.insertKnownNew); one whose append then failed counts too. */
  insertPathStats(): { readonly knownNew: number } {
    return { knownNew: this.writeCounts.knownNew };
  }

  /** How many searches vectorSelect answered directly, and how many it handed to execute() (fast-vector.ts). */
  vectorSelectStats(): { readonly direct: number; readonly general: number } {
    return { ...this.vectorSelects.counts };
  }

  private async vectorResult(prepared: PreparedQuery, sql: string, options: ExecuteOptions): Promise<QueryResult> {
    const env = this.envOf(sql, options);
    // A search of the hnsw graphs: it waits for the vector projection's apply too.
    if (this.barrier.behind) await untilApplied(this.barrier, null, env);
    const { converter, columns } = this.selects.outputOf(prepared);
    // The fields the direct path reads, in one shape (a spread of env made a new shape per search, read by megamorphic loads).
    const { params, deadlineMs, signal, efSearch, maxRows } = env;
    const direct: VectorSelectEnv = { params, deadlineMs, signal, efSearch, maxRows, materializedRowsMax: env.limits.materializedRowsMax };
    const found = await this.vectorSelects.rows(prepared, direct, (row) => converter.convert(row));
    // The general path answers within the same deadline (its own env would restart the timeout: up to twice timeout_ms).
    if (found === null) return this.run(sql, env);
    return { command: 'SELECT', columns: [...columns], rows: found.rows, rowCount: found.rows.length, affectedRows: null, truncated: found.truncated };
  }

  /** Runs one or more statements separated by semicolons; the result is the last one's. */
  async execute(sql: string, options: ExecuteOptions): Promise<QueryResult> {
    return this.scoped(sql, options, (env) => this.run(sql, env));
  }

  /** Runs `body` with the statement's env: in its transaction's scope when it names one (signal, expiry, read-only). */
  private scoped<T>(sql: string, options: ExecuteOptions, body: (env: StatementEnv) => Promise<T>): Promise<T> {
    const ref = options.transaction;
    if (!ref) return body(this.envOf(sql, options));
    assert(this.transactions !== null, 'the engine was built without transactions (SqlEngineDeps.transactions)');
    return withinTransaction(this.transactions, ref, options, (scoped, txn) => body(this.envOf(sql, scoped, txn)));
  }

  private async run(sql: string, env: StatementEnv): Promise<QueryResult> {
    // A SELECT sent again with other parameters skips parsing: its plan is cached under its text.
    const known = this.cache.get(this.plainKeys.of(env.tenant, sql), this.deps.projections.catalog);
    if (known) return this.select(known, env);
    const statements = this.parses.parse(sql);
    const only = statements.length === 1 ? statements[0]! : null;
    if (only && only.text === sql && only.body.kind === 'query' && !only.explain && sql.length <= LIMITS.planCacheTextBytesMax) {
      const result = await this.select(this.selects.prepared(only, env), env);
      this.cache.set(plainSelectKey(env.tenant, sql), this.selects.prepared(only, env));
      return result;
    }
    // Several data statements of one request run as one transaction (query/txn/batch.ts).
    const transactions = this.transactions;
    const batch = env.txn || !transactions || statements.length < 2 ? null : atomicBatch(statements);
    if (batch && transactions) {
      return transactions.atomically(env.tenant, Math.max(1, env.deadlineMs - Date.now()), (txn) => this.executeAll(batch.body, { ...env, txn }), batch.end);
    }
    return this.executeAll(statements, env);
  }

  /** The running CDC streams SHOW CDC STREAM STATUS reports on (sinks/); set once by the composition root. */
  useCdcRuntime(runtime: CdcRuntime): void {
    this.cdcRuntime = runtime;
  }

  private async executeAll(statements: readonly ParsedStatement[], env: StatementEnv): Promise<QueryResult> {
    let result: QueryResult = emptyResult('EMPTY');
    for (const statement of statements) result = await this.executeStatement(statement, env);
    return result;
  }

  /** Inserts rows given as JSON objects without SQL text (dml/insert-json.ts): INSERT's checks, one log record. */
  insertJson(request: JsonInsert, options: ExecuteOptions): Promise<QueryResult> {
    // Not an async function (a promise layer and its turns less per POST rows insert); what throws at once is still a rejection.
    try {
      return this.scoped('', options, (env) => {
        if (env.readOnly) refuseWrite(JSON_INSERT_STATEMENT, env.readOnly);
        return insertJson(request, this.dmlDeps(env, JSON_INSERT_STATEMENT, null));
      });
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /**
   * Runs DDL statements (CREATE TABLE, CREATE INDEX, ALTER TABLE) as ONE log record: all or none
   * (ddl/batch.ts). Each text must parse to exactly one such statement, so generated DDL cannot
   * carry another; the error of a failing one has details.statement_index. Resolves to whether
   * anything changed.
   */
  async executeDdlBatch(texts: readonly string[], options: ExecuteOptions): Promise<boolean> {
    if (options.transaction) throw ddlInTransaction();
    const env = this.envOf(texts.join(';\n'), options);
    const statements = parseDdlBatch(texts, env.readOnly);
    const base = { projections: this.deps.projections, types: this.deps.types, env, bindContextOf: (s: ParsedStatement) => this.bindContext(env, s) };
    try {
      return await runDdlBatch(statements, base);
    } finally {
      const catalog = this.deps.projections.catalog;
      this.scanCache?.retain((tableId) => catalog.table(tableId) !== undefined);
    }
  }

  /** EXPLAIN [ANALYZE] of one query: the plan tree, its text or yaml rendering, planning time. */
  async explain(
    sql: string,
    options: ExplainOptionsInput & { readonly tenant?: string; readonly timeoutMs?: number; readonly signal?: AbortSignal } = {},
  ): Promise<ExplainResult> {
    const env = this.envOf(sql, {
      tenant: options.tenant ?? DEFAULT_TENANT,
      timeoutMs: options.timeoutMs ?? 30_000,
      maxRows: this.limits.resultRowsMax,
      params: options.params ?? [],
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const statements = parseSql(sql);
    if (statements.length !== 1 || statements[0]!.body.kind !== 'query') {
      throw new SvcError('INVALID_QUERY', 'EXPLAIN takes exactly one SELECT statement', {});
    }
    if (this.barrier.behind) await untilApplied(this.barrier, null, env);
    return explainQuery(this.explainDeps(env), statements[0]!, { analyze: options.analyze ?? false, format: options.format ?? 'json' });
  }

  /**
   * Runs SQL and hands its rows out `batchRows` at a time as the caller pulls them (kysely's
   * `stream()`): one SELECT is pulled from its plan as the caller consumes it, so at most one
   * batch is held, whatever the result size (not capped by resultRowsMax). Anything else runs as
   * execute() does (its rows, e.g. RETURNING, are bounded by its own limits) and its rows are
   * handed out in batches. Resolves once the statement is planned (or run): errors before any row
   * reject it, and the stream's columns are known.
   */
  async stream(sql: string, options: StreamOptions): Promise<RowStream> {
    assert(Number.isInteger(options.batchRows) && options.batchRows >= 1, 'batchRows is a positive integer');
    const env = this.envOf(sql, { ...options, maxRows: this.limits.resultRowsMax });
    const statements = this.parses.parse(sql);
    const only = statements.length === 1 ? statements[0]! : null;
    if (only?.body.kind !== 'query' || only.explain) {
      return sliceStream(await this.execute(sql, { ...options, maxRows: this.limits.resultRowsMax }), options.batchRows);
    }
    const prepared = this.selects.prepared(only, env);
    if (this.barrier.behind) await untilApplied(this.barrier, prepared, env);
    return this.selects.stream(prepared, env, options.batchRows);
  }

  private envOf(sql: string, options: ExecuteOptions, txn: TxnContext | null = null): StatementEnv {
    return statementEnv(sql, options, this.limits, this.scanCache, txn);
  }

  private bindContext(env: StatementEnv, statement: ParsedStatement | null) {
    return (catalog: CatalogState): BindContext => newBindContext(this.deps.types, catalog, env.tenant, statement);
  }

  /** What a statement's DML (and DDL) runs with, built field by field: one shape for every statement. `bound`: the statement binding sees. */
  private dmlDeps(env: StatementEnv, statement: ParsedStatement, bound: ParsedStatement | null): DmlDeps {
    return {
      projections: this.deps.projections,
      types: this.deps.types,
      env,
      statement,
      bindContext: this.bindContext(env, bound),
      writeCounts: this.writeCounts,
    };
  }

  private explainDeps(env: StatementEnv) {
    return { ...this.deps, env, prepare: (s: ParsedStatement) => this.selects.prepared(s, env) };
  }

  private async executeStatement(statement: ParsedStatement, env: StatementEnv): Promise<QueryResult> {
    if (env.readOnly) refuseWrite(statement, env.readOnly);
    if (env.txn) refuseInTransaction(statement);
    if (statement.explain) {
      // EXPLAIN ANALYZE runs its query (of a DML statement too) through the projections: a read.
      if (this.barrier.behind) await untilApplied(this.barrier, null, env);
      return explainStatement(this.explainDeps(env), statement);
    }
    const { body } = statement;
    const deps = this.dmlDeps(env, statement, statement);
    switch (body.kind) {
      case 'query':
        return this.select(this.selects.prepared(statement, env), env);
      case 'insert':
        return this.inserts.run(statement, body, deps);
      case 'update':
        return update(body, deps);
      case 'delete':
        return remove(body, deps);
      case 'transaction':
        return transactionControl(body.command);
      case 'unsupported':
        throw new SvcError('INVALID_QUERY', `${body.name} is not supported`, { statement: body.name, reason: 'unsupported' });
      default:
        if (isCdcStatement(body)) return executeCdc(body, deps, this.cdcRuntime);
        return this.ddl(statement, deps);
    }
  }

  /** DDL, then the scan cache lets go of tables that no longer exist (nothing would look them up). */
  private async ddl(statement: ParsedStatement, deps: Parameters<typeof executeDdl>[1]): Promise<QueryResult> {
    try {
      return await executeDdl(statement, deps);
    } finally {
      const catalog = this.deps.projections.catalog;
      this.scanCache?.retain((tableId) => catalog.table(tableId) !== undefined);
    }
  }

  /** A SELECT collected: at most env.maxRows rows, truncated when more were there. */
  private async select(prepared: PreparedQuery, env: StatementEnv): Promise<QueryResult> {
    if (this.barrier.behind) await untilApplied(this.barrier, prepared, env);
    if (!env.txn && !env.signal?.aborted && this.points.handles(prepared)) return this.pointResult(prepared, env.params, env.maxRows);
    return this.selects.collect(prepared, env);
  }
}
