import type { QValue } from '../../types/contract.js';
import type { ScanNode, VectorAccess } from '../../plan/nodes.js';
import { compile } from '../compile.js';
import { checkContinue, shouldYield, yieldNow, type Batch, type ExecContext, type Row } from '../context.js';
import { filterOp } from './basic.js';
import { rowDecoder } from './row-decoder.js';
import { LIMITS } from '../../limits.js';
import { andAll } from '../../plan/expr-util.js';

/** Each round searches this many times more candidates than the last (pgvector #259: filters starve a fixed ef). */
const GROWTH = 4;

const OFF_THREAD = { offThread: true } as const;

/** The scan operator (scan.ts), passed in: the exact fallback reads the rows as any scan of the range would. */
type ScanOp = (node: ScanNode, ctx: ExecContext) => AsyncIterable<Batch>;

export interface Ranked {
  readonly row: Row;
  readonly distance: number;
}

/**
 * The k nearest rows (k = LIMIT + OFFSET) that pass the scan's filter, nearest first. Searches the
 * hnsw index with a beam of max(ef_search, k); when the filter leaves fewer than k of the
 * candidates, searches again with GROWTH times more, until k match or the index is exhausted.
 * Candidates are read through the row source (the query's snapshot: a row gone or changed since
 * the index saw it is dropped or re-measured) and ranked by the exact SQL distance. Falls back to
 * an exact scan (of the WHERE's key range when it has one, else the table) when the source cannot
 * use the index (a transaction that changed the table), when the filter is so selective that more
 * than LIMITS.vectorCandidatesMax candidates would be needed, when the key range looks smaller than
 * the next round would read, or when the index ran out before k rows (rows with NULL vectors are
 * not in it but sort last in an exact ORDER BY).
 */
export async function* vectorScanOp(node: ScanNode, access: VectorAccess, ctx: ExecContext, scan: ScanOp): AsyncIterable<Batch> {
  const evalConst = (e: Parameters<typeof compile>[0]): QValue => compile(e, ctx).eval([]);
  const limit = Number(evalConst(access.topN.limit) ?? Infinity);
  const offset = access.topN.offset ? Number(evalConst(access.topN.offset) ?? 0) : 0;
  const k = limit + Math.max(0, offset);
  if (!(k > 0)) return;
  const query = evalConst(access.query);
  const found = query instanceof Float32Array && Number.isSafeInteger(k) ? await indexSearch(node, access, ctx, query, k) : null;
  const ranked = found ?? (await exactSearch(scan({ ...node, access: access.exact ?? { kind: 'seq', reverse: false } }, ctx), access, ctx, k));
  for (let i = 0; i < ranked.length; i += LIMITS.batchRows) {
    checkContinue(ctx);
    yield ranked.slice(i, i + LIMITS.batchRows).map((r) => r.row);
  }
}

/** The index rounds; null: use the exact scan. */
async function indexSearch(node: ScanNode, access: VectorAccess, ctx: ExecContext, query: Float32Array, k: number): Promise<Ranked[] | null> {
  const search = ctx.source.vectorSearch?.bind(ctx.source);
  if (!search) return null;
  const distance = compile(access.distance, ctx).eval;
  const decode = rowDecoder(node);
  // The key range's own conditions: the share of candidates inside it sizes the range (the rest of the filter does not).
  const rangeConditions = andAll(access.exact?.consumed ?? []);
  const inRange = rangeConditions === null ? null : compile(rangeConditions, ctx).eval;
  let fetch = k;
  for (;;) {
    checkContinue(ctx);
    const ef = Math.max(ctx.efSearch, fetch);
    const searching = search(node.table.id, access.index.id, query, fetch, ef);
    if (searching === null) return null;
    const hits = await searching;
    // In LevelDB's thread pool: under load the event loop is the bottleneck, and the candidates' reads
    // (one native call instead of one per row) then run beside it.
    const images = await ctx.source.getRows(
      node.table.id,
      hits.map((h) => h.pk),
      OFF_THREAD,
    );
    const candidates: Row[] = [];
    images.forEach((image, i) => {
      if (image) candidates.push(decode(hits[i]!.pk, image));
    });
    const matched = node.filter ? await collect(filterOp(once(candidates), ctx, node.filter)) : candidates;
    const ranked = rankFinite(matched, distance);
    if (ranked.length >= k) return ranked.slice(0, k);
    // Fewer hits than asked: the whole index was searched, and rows outside it (NULL vectors) may follow.
    if (hits.length < fetch) return null;
    // Grow by the share of candidates the filter kept (x2 at least, x4 at most); too many: exact scan.
    const needed = ranked.length > 0 ? Math.ceil(((k * hits.length) / ranked.length) * 1.2) : Infinity;
    fetch = Math.min(Math.max(fetch * 2, needed), fetch * GROWTH);
    if (fetch > LIMITS.vectorCandidatesMax) return null;
    // The WHERE's key range holds about (share kept) x (index size) rows: fewer than the next round reads, rank them exactly.
    if (inRange !== null && rangeRowsGuess(ctx, access, candidates.filter((row) => inRange(row) === true).length, hits.length) < fetch) return null;
    if (shouldYield(ctx)) await yieldNow(ctx);
  }
}

/** Rows the WHERE's key range holds, guessed from the share of candidates inside it (+1 each: none inside is no proof of an empty range). */
function rangeRowsGuess(ctx: ExecContext, access: VectorAccess, inside: number, candidates: number): number {
  const indexRows = ctx.source.vectorIndexSize?.(access.index.id) ?? Infinity;
  return (indexRows * (inside + 1)) / (candidates + 1);
}

/** Every row the WHERE's range (else the table) holds, filtered, the k nearest kept (a bounded buffer, trimmed as it fills). */
async function exactSearch(filtered: AsyncIterable<Batch>, access: VectorAccess, ctx: ExecContext, k: number): Promise<Ranked[]> {
  const distance = compile(access.distance, ctx).eval;
  let kept: Ranked[] = [];
  for await (const batch of filtered) {
    for (const row of batch) kept.push({ row, distance: numeric(distance(row)) });
    if (kept.length > Math.max(2 * k, LIMITS.batchRows)) kept = sortRanked(kept).slice(0, k);
    if (shouldYield(ctx)) await yieldNow(ctx);
  }
  return sortRanked(kept).slice(0, k);
}

/**
 * One round's candidates ranked by exact distance, nearest first (ties keep the index's order); a
 * row whose vector became NULL since the index saw it sorts last: only the exact scan may place it,
 * so it is dropped. Shared with the direct path (query/fast-vector.ts), so both rank alike.
 */
export function rankFinite(rows: readonly Row[], distance: (row: Row) => QValue): Ranked[] {
  return sortRanked(rows.map((row) => ({ row, distance: numeric(distance(row)) }))).filter((r) => r.distance !== Number.POSITIVE_INFINITY);
}

/** NULL (and NaN) distances sort last, as ORDER BY ... ASC NULLS LAST puts them. */
function numeric(value: QValue): number {
  const n = typeof value === 'number' ? value : Number.NaN;
  return Number.isNaN(n) ? Number.POSITIVE_INFINITY : n;
}

function sortRanked(ranked: Ranked[]): Ranked[] {
  return ranked.sort((a, b) => a.distance - b.distance || (a.distance === b.distance ? 0 : a.distance === Infinity ? 1 : -1));
}

async function* once(rows: Row[]): AsyncIterable<Batch> {
  if (rows.length > 0) yield rows;
}

async function collect(batches: AsyncIterable<Batch>): Promise<Row[]> {
  const out: Row[] = [];
  for await (const batch of batches) out.push(...batch);
  return out;
}
