import type { IndexDef, TableDef } from '../../../core/catalog.js';
import { decodeKey, encodeKey, prefixUpperBound } from '../../../core/key-encoding.js';
import type { SqlType, SqlValue } from '../../../core/values.js';
import type { QValue } from '../../types/contract.js';
import type { KeyAccess, ScanNode } from '../../plan/nodes.js';
import { compile } from '../compile.js';
import { checkContinue, shouldYield, yieldNow, type Batch, type ExecContext, type Row } from '../context.js';
import type { ByteRange } from '../source.js';
import { filterOp } from './basic.js';
import { vectorScanOp } from './vector-scan.js';
import { rowDecoder } from './row-decoder.js';
import { LIMITS } from '../../limits.js';
import type { ScanCache } from '../scan-cache.js';
import type { TableRows } from '../table-rows.js';

const HIDDEN_ROW_ID: SqlType = { name: 'int8' };
/** Key-encoding markers (core/key-encoding.ts): a value starts 0x01, NULL is 0x02; DESC complements. */
const MARK_NULL_ASC = 0x02;
const MARK_VALUE_DESC = 0xfe;

function concat(prefix: Uint8Array, byte: number): Uint8Array {
  const out = new Uint8Array(prefix.length + 1);
  out.set(prefix);
  out[prefix.length] = byte;
  return out;
}

/** Types of the row key: the primary key columns, or the hidden BIGINT row id. */
export function pkTypes(table: TableDef): SqlType[] {
  if (table.primaryKey.length === 0) return [HIDDEN_ROW_ID];
  return table.primaryKey.map((id) => table.columns.find((c) => c.id === id)!.type);
}

export function indexTypes(table: TableDef, index: IndexDef): SqlType[] {
  return index.columnIds.map((id) => table.columns.find((c) => c.id === id)!.type);
}

/**
 * Table scan (whole table, primary-key range or secondary-index range) with its pushed-down filter.
 * `known`: the scan cache lookup already made for this scan (aggregate-scan.ts), not made again.
 */
export function scanOp(node: ScanNode, ctx: ExecContext, known?: CacheLookup | null): AsyncIterable<Batch> {
  // The filter is part of the search: it decides how many candidates the index must give.
  if (node.access.kind === 'vector') return vectorScanOp(node, node.access, ctx, scanOp);
  const rows = node.access.kind === 'index' ? indexRows(node, node.access, ctx) : tableRows(node, ctx, known);
  return node.filter ? filterOp(rows, ctx, node.filter) : rows;
}

async function* tableRows(node: ScanNode, ctx: ExecContext, known: CacheLookup | null | undefined): AsyncIterable<Batch> {
  const access = node.access;
  const lookup = access.kind === 'index' ? null : known !== undefined ? known : await cacheLookup(node, ctx);
  let range: ByteRange & { point?: Uint8Array } = { reverse: access.reverse };
  if (access.kind === 'pk') {
    const computed = keyRange(access, pkTypes(node.table), access.index.descending, ctx);
    if (computed === null) return;
    range = computed;
  }
  if (lookup?.rows) {
    yield* cachedRows(lookup.rows, range, ctx);
    return;
  }
  if (lookup && access.kind === 'seq') {
    yield* collectingScan(node, ctx, ctx.scanCache!, lookup.version, lookup.fill);
    return;
  }
  const decode = rowDecoder(node);
  if (range.point) {
    const [image] = await ctx.source.getRows(node.table.id, [range.point]);
    if (image) yield [decode(range.point, image)];
    return;
  }
  for await (const batch of ctx.source.rows(node.table.id, range)) {
    checkContinue(ctx);
    yield batch.map(([pk, image]) => decode(pk, image));
  }
}

/** The version of a table a scan reads and the scan cache's rows at it (null: not cached yet). */
export interface CacheLookup {
  readonly version: number;
  readonly rows: TableRows | null;
  /** A fill of the entry already begun for this scan (ScanCache.beginFill), which it completes; undefined: the scan begins one if it can. */
  readonly fill?: object | null;
}

/**
 * The version of the scanned table this source reads and the cache's rows at it (null rows: not
 * cached yet), or null when the scan cannot use the cache. A snapshot taken while a write to the
 * table was in flight finds out which side of it it reads (ScanCache.versionSeen).
 */
export async function cacheLookup(node: ScanNode, ctx: ExecContext): Promise<CacheLookup | null> {
  const cache = ctx.scanCache;
  if (!cache || node.withKey) return null;
  if (ctx.source.rowWrites) cache.follow(ctx.source.rowWrites);
  const tableId = node.table.id;
  let version = ctx.source.rowVersion(tableId);
  if (version === null) {
    const write = ctx.source.rowWriteInFlight?.(tableId) ?? null;
    if (write === null) return null;
    version = await cache.versionSeen(node.table, write, async (pk) => (await ctx.source.getRows(tableId, [pk]))[0]);
    if (version === null) return null;
  }
  return { version, rows: cache.get(node.table, version) };
}

/** The rows of a cached table within a primary-key byte range, in (reverse) key order. */
async function* cachedRows(cached: TableRows, range: ByteRange, ctx: ExecContext): AsyncIterable<Batch> {
  for (const batch of cached.batches(range, LIMITS.batchRows)) {
    if (shouldYield(ctx)) await yieldNow(ctx);
    checkContinue(ctx);
    yield batch;
  }
}

/**
 * A whole-table scan from the store that keeps every decoded row (all columns) and its key for
 * the scan cache, when the table fits the cache and the scan runs to its end.
 */
async function* collectingScan(node: ScanNode, ctx: ExecContext, cache: ScanCache, version: number, begun: object | null | undefined): AsyncIterable<Batch> {
  const reverse = node.access.reverse;
  const fill = begun !== undefined ? begun : cache.admits(node.est?.rows ?? 0) ? cache.beginFill(node.table, version) : null;
  let kept: { pks: Uint8Array[]; rows: Row[] } | null = fill ? { pks: [], rows: [] } : null;
  // The stored bytes read so far. The packed chunks hold about as much or more (a float8 is ~10 bytes
  // stored and 8 packed; texts, documents and numbers in rows of any kind more), so past twice the
  // cache's byte bound the table will not be kept and collecting it further is wasted.
  let imageBytes = 0;
  const decode = rowDecoder(node, kept !== null);
  try {
    for await (const batch of ctx.source.rows(node.table.id, { reverse })) {
      checkContinue(ctx);
      const rows = batch.map(([pk, image]) => decode(pk, image));
      if (kept) {
        for (let i = 0; i < rows.length; i++) {
          kept.pks.push(batch[i]![0]);
          kept.rows.push(rows[i]!);
          imageBytes += batch[i]![0].length + batch[i]![1].length;
        }
        if (!cache.admits(kept.rows.length, imageBytes)) kept = null;
      }
      yield rows;
    }
    if (kept && reverse) {
      kept.pks.reverse();
      kept.rows.reverse();
    }
    if (fill && kept) cache.endFill(fill, kept.pks, kept.rows);
  } finally {
    if (fill) cache.abandonFill(fill);
  }
}

async function* indexRows(node: ScanNode, access: KeyAccess, ctx: ExecContext): AsyncIterable<Batch> {
  const decode = rowDecoder(node);
  const keyTypes = indexTypes(node.table, access.index);
  const pkT = pkTypes(node.table);
  const range = keyRange(access, keyTypes, access.index.descending, ctx);
  if (range === null) return;
  const allTypes = [...keyTypes, ...pkT];
  const allDesc = [...access.index.descending, ...pkT.map(() => false)];
  // Index entries still come from the store; the rows they point to from the cache when it has them.
  const cached = (await cacheLookup(node, ctx))?.rows ?? null;
  for await (const entries of ctx.source.indexEntries(access.index.id, { ...range, reverse: access.reverse })) {
    checkContinue(ctx);
    const pks = entries.map((bytes) => encodeKey(pkT, decodeKey(allTypes, bytes, allDesc).slice(keyTypes.length)));
    if (cached) {
      yield pks.map((pk) => cached.get(pk)).filter((row): row is Row => row !== null);
      continue;
    }
    const images = await ctx.source.getRows(node.table.id, pks);
    const out: Batch = [];
    images.forEach((image, i) => {
      if (image) out.push(decode(pks[i]!, image));
    });
    if (out.length > 0) yield out;
  }
}

/**
 * The byte range of a key-prefix equality plus bounds on the next column (a superset of the
 * matching keys: the scan's filter re-checks every condition). null: nothing can match.
 */
function keyRange(access: KeyAccess, types: readonly SqlType[], descending: readonly boolean[], ctx: ExecContext): (ByteRange & { point?: Uint8Array }) | null {
  const evalConst = (e: Parameters<typeof compile>[0]): QValue => compile(e, ctx).eval([]);
  const prefix = access.eq.map(evalConst) as SqlValue[];
  if (prefix.some((v) => v === null)) return null;
  const k = prefix.length;
  const enc = (values: SqlValue[]): Uint8Array => encodeKey(types.slice(0, values.length), values, descending);
  const p = enc(prefix);
  const upperOf = (bytes: Uint8Array): Uint8Array | undefined => (bytes.length === 0 ? undefined : (prefixUpperBound(bytes) ?? undefined));
  if (k === types.length && !access.lower && !access.upper) return { point: p, gte: p, ...(upperOf(p) ? { lt: upperOf(p)! } : {}), reverse: access.reverse };
  const lo = access.lower ? (evalConst(access.lower.expr) as SqlValue) : undefined;
  const hi = access.upper ? (evalConst(access.upper.expr) as SqlValue) : undefined;
  if (lo === null || hi === null) return null;
  const desc = descending[k] === true;
  // In key order: ASC columns hold values (0x01) then NULLs (0x02); DESC columns the complement.
  const from = desc ? hi : lo;
  const fromInclusive = desc ? access.upper?.inclusive : access.lower?.inclusive;
  const to = desc ? lo : hi;
  const toInclusive = desc ? access.lower?.inclusive : access.upper?.inclusive;
  let gte: Uint8Array | undefined;
  let lt: Uint8Array | undefined;
  if (from === undefined && to === undefined) return { ...(k === 0 ? {} : { gte: p }), ...(upperOf(p) ? { lt: upperOf(p)! } : {}), reverse: access.reverse };
  if (from !== undefined) {
    const bytes = enc([...prefix, from]);
    gte = fromInclusive ? bytes : upperOf(bytes);
  } else gte = desc ? concat(p, MARK_VALUE_DESC) : k === 0 ? undefined : p;
  if (to !== undefined) {
    const bytes = enc([...prefix, to]);
    lt = toInclusive ? upperOf(bytes) : bytes;
  } else lt = desc ? upperOf(p) : concat(p, MARK_NULL_ASC);
  return { ...(gte ? { gte } : {}), ...(lt ? { lt } : {}), reverse: access.reverse };
}
