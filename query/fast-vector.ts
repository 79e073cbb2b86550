import { keys, MEMO_OVERHEAD_BYTES, rowCacheName, type CachedRow, type RowVersionedStore } from '../projections/index.js';
import { checkContinue, compile, type Evaluator, type ExecContext, type Row, type RowSource } from './exec/index.js';
import { execContext } from './run-query.js';
import { rankFinite, type Ranked } from './exec/ops/vector-scan.js';
import { rowDecoder } from './exec/ops/row-decoder.js';
import type { VectorSearcher } from './exec/source.js';
import type { Expr, VectorAccess } from './plan/ir.js';
import type { Plan, ScanNode } from './plan/nodes.js';
import { convertParams, type PreparedQuery } from './prepare.js';
import type { JsonRow } from './result.js';
import type { QType, ResolvedFunction, TypeSystem } from './types/contract.js';
import type { CollectedRows } from './fast-point.js';
import { float32SquaredNorm } from './functions/vector-math.js';
import { CosineRanker } from './fast-vector-dot.js';

/**
 * A prepared SELECT that is an hnsw top-k (LIMIT k, no OFFSET, over a project of a vector index
 * scan: the REST /vectors/search and the vector protocol's /query), answered without the
 * executor: one graph search, the candidates' rows read (candidates()), then the first round of exec/ops/vector-scan.ts's
 * indexSearch (decode, the scan's filter, rank by exact distance), the project and the converter.
 *
 * Why the answer is the same: that first round is what the general path computes when it finds k
 * rows, with the plan's own expressions, decoder and ranking (rankFinite). Whenever it finds fewer
 * (rows deleted or changed since the index saw them, k past the index's size, a filter that keeps
 * few), rows() answers null and the caller runs the general path, which grows the search or scans
 * exactly. Snapshot: the candidates are read together as of one moment after the request started
 * (synchronously, or by one getMany: LevelDB's implicit snapshot of that call); the engine waits at the read barrier
 * (projections/read-barrier.ts) until every write acknowledged before it is applied to the store and
 * the graphs, so the search sees it, as a snapshot taken at the start would.
 */
interface VectorPlan {
  readonly scan: ScanNode;
  readonly access: VectorAccess;
  readonly limit: Expr;
  readonly exprs: readonly Expr[];
  /** Per project expression: true when it is the ORDER BY distance itself (the rank computed it: not again). */
  readonly isDistance: readonly boolean[];
  readonly decode: (pk: Uint8Array, image: Uint8Array) => Row;
  /** Per expression: its evaluator when it reads no parameter (compiled once), null when it does (compiled per search). */
  readonly compiled: Map<Expr, Evaluator | null>;
  /** When the ORDER BY is `column <=> query` (pgvector's cosine distance): that column and the query, ranked by cosineRank. */
  readonly cosine: { readonly column: number; readonly query: Expr; readonly sameAsSearched: boolean } | null;
}

/** What a direct search needs of its statement (execute()'s env). */
export interface VectorSelectEnv {
  readonly params: readonly unknown[];
  readonly deadlineMs: number;
  readonly signal: AbortSignal | undefined;
  readonly efSearch: number;
  readonly maxRows: number;
  readonly materializedRowsMax: number;
}

/** Candidate rows are read in LevelDB's thread pool, as the executor reads them. */
const OFF_THREAD = { offThread: true } as const;

/**
 * Compiled expressions of the direct path read parameters, constants and the row only: the source
 * (subqueries' rows) is never asked (plans with subqueries are not taken).
 */
const NO_SOURCE: RowSource = {
  rows: () => noSource(),
  indexEntries: () => noSource(),
  getRows: () => noSource(),
  rowVersion: () => null,
};

function noSource(): never {
  throw new Error('the direct vector search reads no rows through a source');
}

export class VectorSelects {
  private readonly plans = new WeakMap<PreparedQuery, VectorPlan | null>();
  /**
   * Per table, the point-read cache's name of a hit's row key (rowCacheName), by the hit's primary key
   * object: the vector index hands out one object per indexed row version (its label map's), so a row
   * found again costs a WeakMap lookup, not a key built and turned into text (and that text's hash,
   * kept in the string, is not computed again). Entries go with the keys the index no longer holds:
   * at most one per indexed row, as the index's own label map.
   */
  private readonly rowNames = new Map<number, WeakMap<Uint8Array, string>>();
  /** Searches answered here, and those handed to the general path (fewer than k rows in the first round). */
  readonly counts = { direct: 0, general: 0 };

  constructor(
    private readonly store: RowVersionedStore,
    private readonly vectors: VectorSearcher | null,
    private readonly types: TypeSystem,
  ) {}

  /** Whether `prepared` may be answered by rows() (decided on the first call, then remembered). */
  handles(prepared: PreparedQuery): boolean {
    return this.vectors !== null && this.planOf(prepared) !== null;
  }

  /**
   * The rows of a prepared hnsw top-k (handles() said so), converted by `convert`, cut at
   * env.maxRows as collectPlan cuts; null: only the general path answers (nothing was returned yet).
   */
  async rows(prepared: PreparedQuery, env: VectorSelectEnv, convert: (row: Row) => JsonRow): Promise<CollectedRows | null> {
    const plan = this.planOf(prepared)!;
    const params = convertParams(this.types, prepared.paramTypes, env.params);
    const ctx = execContext({
      types: this.types,
      source: NO_SOURCE,
      params,
      deadlineMs: env.deadlineMs,
      signal: env.signal,
      stats: null,
      materializedRowsMax: env.materializedRowsMax,
      efSearch: env.efSearch,
    });
    const k = countOf(evaluator(plan, plan.limit, ctx)([]));
    const query = evaluator(plan, plan.access.query, ctx)([]);
    checkContinue(ctx);
    const searching = k === null || !(query instanceof Float32Array) ? null : this.vectors!.search(plan.access.index.id, query, k, Math.max(ctx.efSearch, k));
    if (searching === null || k === null) {
      this.counts.general += 1;
      return null;
    }
    const hits = await searching;
    const rows = hits.length === 0 ? [] : await this.candidates(plan, hits);
    const ranked = rankedRound(plan, ctx, rows, query);
    if (ranked.length < k) {
      this.counts.general += 1;
      return null;
    }
    checkContinue(ctx);
    this.counts.direct += 1;
    return project(plan, ctx, ranked.slice(0, k), convert, env.maxRows);
  }

  /**
   * The candidates' rows as of now, decoded (undefined: deleted). While no write to the table's rows
   * is in flight, through the point-read cache (row-versions.ts getRowSyncByName; synchronous, so no write
   * starts between two of the reads: one state of the table, as one getMany's implicit snapshot): a
   * row read again costs a Map lookup, and its decoded row is kept in the entry's memo slot (dropped
   * with the entry when a write changes the row), where the thread pool's getMany cost the event loop
   * about as much as ten getSync and a pool thread as much again. While a write is in flight, one
   * getMany in LevelDB's thread pool as the executor reads them (vector-scan.ts), as of that call.
   */
  private candidates(plan: VectorPlan, hits: readonly { pk: Uint8Array }[]): (Row | undefined)[] | Promise<(Row | undefined)[]> {
    const tableId = plan.scan.table.id;
    const byName = this.store.getRowSyncByName;
    if (byName !== undefined && !this.store.rowWritesInFlight(tableId)) {
      const names = this.rowNamesOf(tableId);
      return hits.map((h) => memoizedRow(plan, h.pk, byName(tableId, rowName(names, tableId, h.pk))));
    }
    const read = this.store.getMany(
      hits.map((h) => keys.rowKey(tableId, h.pk)),
      undefined,
      OFF_THREAD,
    );
    return read.then((images) => images.map((image, i) => (image ? plan.decode(hits[i]!.pk, image) : undefined)));
  }

  private rowNamesOf(tableId: number): WeakMap<Uint8Array, string> {
    let names = this.rowNames.get(tableId);
    if (names === undefined) this.rowNames.set(tableId, (names = new WeakMap()));
    return names;
  }

  private planOf(prepared: PreparedQuery): VectorPlan | null {
    let plan = this.plans.get(prepared);
    if (plan === undefined) {
      plan = vectorPlanOf(prepared.plan);
      this.plans.set(prepared, plan);
    }
    return plan;
  }
}

/** The point-read cache's name of the row key of `pk` in table `tableId`, made once per primary key object. */
function rowName(names: WeakMap<Uint8Array, string>, tableId: number, pk: Uint8Array): string {
  let name = names.get(pk);
  if (name === undefined) names.set(pk, (name = rowCacheName(keys.rowKey(tableId, pk))));
  return name;
}

/**
 * The cached row's decoded row, made once per plan and kept in its memo slot: frozen, shared by the
 * searches that read the row until a write drops the entry (read it, never change it). Counted
 * against the cache's bound as what it holds beside the image (memoBytes).
 */
function memoizedRow(plan: VectorPlan, pk: Uint8Array, entry: CachedRow): Row | undefined {
  if (!entry.found) return undefined;
  if (entry.memoOwner === plan) return entry.memo as Row;
  // Made from the kept text once per plan (CachedRow.image): the hit above makes no bytes.
  const image = entry.image!;
  const row = plan.decode(pk, image);
  Object.freeze(row);
  entry.remember(plan, row, memoBytes(image));
  return row;
}

/**
 * What a decoded row holds besides its image, estimated from the image: its values are about the
 * image's bytes again (a vector's floats, a text's characters, a JSON document's objects: more than
 * its text), plus the row's array and each value's headers. Measured on 16,847 rows of 128 floats, a
 * short id and a small JSON document: 785 bytes of heap per decoded row, counted 1,332.
 */
function memoBytes(image: Uint8Array): number {
  return ROW_MEMO_IMAGE_FACTOR * image.length + MEMO_OVERHEAD_BYTES * ROW_MEMO_OVERHEAD_OBJECTS;
}
const ROW_MEMO_IMAGE_FACTOR = 2;
const ROW_MEMO_OVERHEAD_OBJECTS = 4;

/** indexSearch's first round: the candidates, filtered by the scan's filter, ranked exactly (NULL vectors dropped). */
function rankedRound(plan: VectorPlan, ctx: ExecContext, rows: readonly (Row | undefined)[], query: unknown): Ranked[] {
  const filter = plan.scan.filter === null ? null : evaluator(plan, plan.scan.filter, ctx);
  const candidates: Row[] = [];
  for (const row of rows) if (row !== undefined && (filter === null || filter(row) === true)) candidates.push(row);
  return rankFinite(candidates, (plan.cosine === null ? null : cosineRank(plan, plan.cosine, ctx, query)) ?? evaluator(plan, plan.access.distance, ctx));
}

/**
 * Squared norms (float32SquaredNorm) of the vectors ranked: a candidate's decoded row is shared by the
 * searches that find it (its memo in the point-read cache), so its norm is computed once, not per search.
 */
const squaredNorms = new WeakMap<Float32Array, number>();

/** The float32 dot products of cosineRank in WebAssembly (fast-vector-dot.ts: the same numbers). */
const ranker = new CosineRanker();

/**
 * `column <=> query` per row as cosineDistance computes it (the same number: the same three float
 * sums), the query's norm summed once per search and each row's once per decoded row, where the
 * expression summed both per row (a third of the arithmetic is left). null: the generic evaluator
 * answers (no query vector).
 */
function cosineRank(plan: VectorPlan, cosine: NonNullable<VectorPlan['cosine']>, ctx: ExecContext, searched: unknown): ((row: Row) => number | null) | null {
  // The query searched with, when the ORDER BY's is the same expression (it is for every search the protocols send).
  const query = cosine.sameAsSearched ? searched : evaluator(plan, cosine.query, ctx)([]);
  if (!(query instanceof Float32Array)) return null;
  const queryNorm = ranker.squaredNorm(query);
  return (row) => {
    const v = row[cosine.column];
    if (v === null || v === undefined) return null;
    const vector = v as Float32Array;
    let norm = squaredNorms.get(vector);
    if (norm === undefined) squaredNorms.set(vector, (norm = float32SquaredNorm(vector)));
    return ranker.distance(vector, query, norm, queryNorm);
  };
}

/** The column and query of a `column <=> query` ORDER BY (the query reads no column), else null. */
function cosineOf(distance: Expr, searched: Expr): VectorPlan['cosine'] {
  if (distance.kind !== 'call' || distance.fn.name !== '<=>' || !distance.fn.strict || distance.args.length !== 2) return null;
  const [column, query] = distance.args as [Expr, Expr];
  const vectorTyped = distance.fn.argTypes.every((t) => t.name === 'vector') && column.type.name === 'vector' && query.type.name === 'vector';
  if (!vectorTyped || column.kind !== 'column' || !everyLeaf(query, (leaf) => leaf.kind !== 'column' && leaf.kind !== 'outer')) return null;
  return { column: column.index, query, sameAsSearched: sameExpr(query, searched) };
}

/**
 * The project's expressions over the ranked rows, converted; cut at rowsMax. The distance column
 * takes the rank's value: the same function of the same row (a finite number: others were dropped).
 */
function project(plan: VectorPlan, ctx: ExecContext, ranked: readonly Ranked[], convert: (row: Row) => JsonRow, rowsMax: number): CollectedRows {
  const evals = plan.exprs.map((e, i) => (plan.isDistance[i] ? null : evaluator(plan, e, ctx)));
  const out: JsonRow[] = [];
  for (const { row, distance } of ranked) {
    if (out.length >= rowsMax) return { rows: out, truncated: true };
    out.push(convert(evals.map((value) => (value === null ? distance : value(row)))));
  }
  return { rows: out, truncated: false };
}

/** LIMIT's row count when it is a positive safe integer; null: anything else (the general path refuses or empties it). */
function countOf(value: unknown): number | null {
  if (typeof value !== 'number' && typeof value !== 'bigint') return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** limit(k, no offset) over project over a vector index scan, each expression free of subqueries; else null. */
function vectorPlanOf(plan: Plan): VectorPlan | null {
  if (plan.kind !== 'limit' || plan.limit === null || plan.offset !== null || !simple(plan.limit)) return null;
  const projected = plan.input;
  if (projected.kind !== 'project' || !projected.exprs.every(simple)) return null;
  const scan = projected.input;
  if (scan.kind !== 'scan' || scan.withKey || scan.table.kind !== 'table' || scan.access.kind !== 'vector') return null;
  const access = scan.access;
  if (access.topN.offset !== null || access.topN.limit !== plan.limit || !simple(access.query) || !simple(access.distance)) return null;
  if (scan.filter !== null && !simple(scan.filter)) return null;
  const isDistance = projected.exprs.map((e) => sameExpr(e, access.distance));
  return {
    scan,
    access,
    limit: plan.limit,
    exprs: projected.exprs,
    isDistance,
    decode: rowDecoder(scan),
    compiled: new Map(),
    cosine: cosineOf(access.distance, access.query),
  };
}

/**
 * `expr`'s evaluator for this search. One that reads no parameter is compiled once per plan and
 * reused: compiled, a simple() expression keeps nothing of its ExecContext but the parameters (no
 * subquery, no outer row). One that reads parameters is compiled per search (compile reads them once).
 */
function evaluator(plan: VectorPlan, expr: Expr, ctx: ExecContext): Evaluator {
  let known = plan.compiled.get(expr);
  if (known === undefined) {
    known = readsParams(expr) ? null : compile(expr, ctx).eval;
    plan.compiled.set(expr, known);
  }
  return known ?? compile(expr, ctx).eval;
}

/** Whether a simple() expression reads a parameter (conservative: kinds simple() refuses count as reading). */
function readsParams(expr: Expr): boolean {
  return !everyLeaf(expr, (leaf) => leaf.kind !== 'param');
}

/** The same computation: one function of the same columns and parameters (conservative: other kinds are never the same). */
function sameExpr(a: Expr, b: Expr): boolean {
  if (a === b) return true;
  if (a.kind === 'column' && b.kind === 'column') return a.index === b.index;
  if (a.kind === 'param' && b.kind === 'param') return a.index === b.index && a.type.name === b.type.name;
  if (a.kind === 'cast' && b.kind === 'cast') return a.cast === b.cast && sameExpr(a.arg, b.arg);
  if (a.kind === 'call' && b.kind === 'call')
    return sameFunction(a.fn, b.fn) && a.args.length === b.args.length && a.args.every((x, i) => sameExpr(x, b.args[i]!));
  return false;
}

/** One function resolved twice (each resolution makes its own impl): same name and types, never a volatile one. */
function sameFunction(a: ResolvedFunction, b: ResolvedFunction): boolean {
  const typeText = (types: readonly QType[]): string => JSON.stringify(types);
  return (
    a.name === b.name &&
    a.immutable &&
    b.immutable &&
    a.strict === b.strict &&
    typeText(a.argTypes) === typeText(b.argTypes) &&
    typeText([a.returnType]) === typeText([b.returnType])
  );
}

/** Expressions of constants, parameters, the row's columns and calls, casts and tests of them (no subquery, no outer row). */
function simple(expr: Expr): boolean {
  return everyLeaf(expr, () => true);
}

/** Whether `expr` is simple()'s shape and each of its leaves (constants, parameters, columns) passes `ok`. */
function everyLeaf(expr: Expr, ok: (leaf: Expr) => boolean): boolean {
  switch (expr.kind) {
    case 'const':
    case 'param':
    case 'column':
      return ok(expr);
    case 'call':
    case 'and':
    case 'or':
      return expr.args.every((arg) => everyLeaf(arg, ok));
    case 'cast':
    case 'not':
    case 'is_null':
      return everyLeaf(expr.arg, ok);
    default:
      return false;
  }
}
