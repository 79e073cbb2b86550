import type { IndexId, TableId } from '../../core/catalog.js';
import { prefixUpperBound } from '../../core/key-encoding.js';
import type { Lsn } from '../../core/units.js';
import { keys, overlaid, type OverlayEntry, type PendingOverlay, type VectorHit, type WriteView } from '../../projections/index.js';
import type { ByteRange, RowSource } from '../exec/source.js';
import type { ReadSet } from './read-set.js';
import type { KeySpan } from './recent-writes.js';

const EMPTY = new Uint8Array(0);

/** Where a layered reader notes what it read; null: reads are not tracked (no conflict can come of them). */
export interface ReadTracking {
  readonly reads: ReadSet;
  readonly seenLsn: Lsn;
}

type Bounds = { gte?: Uint8Array | undefined; lt?: Uint8Array | undefined; reverse?: boolean | undefined };

/**
 * Reads of one transaction: a base (the sequencer's view for DML, a snapshot for SELECT) with the
 * transaction's own uncommitted changes laid over it, noting each span read when tracked.
 */
class Layer {
  constructor(
    private readonly overlay: PendingOverlay,
    private readonly tracking: ReadTracking | null,
  ) {}

  get tracked(): boolean {
    return this.tracking !== null;
  }

  note(span: KeySpan): void {
    this.tracking?.reads.addSpan(span, this.tracking.seenLsn);
  }

  /** Row batches [pk, image] of `base` in a span of row keys, with this transaction's rows laid over. */
  rows(tableId: TableId, bounds: Bounds, base: AsyncIterable<[Uint8Array, Uint8Array][]>): AsyncIterable<[Uint8Array, Uint8Array][]> {
    const span = keys.rowSpan(tableId, bounds);
    this.note(span);
    return overlaid(base, this.pendingIn(span, bounds.reverse ?? false), bounds.reverse ?? false);
  }

  /** Index entry batches (bytes after the index id) of `base`, with this transaction's entries laid over. */
  async *indexEntries(span: KeySpan, reverse: boolean, base: AsyncIterable<Uint8Array[]>): AsyncIterable<Uint8Array[]> {
    this.note(span);
    const pending = this.pendingIn(span, reverse);
    if (pending.length === 0) {
      yield* base;
      return;
    }
    for await (const batch of overlaid(asPairs(base), pending, reverse)) yield batch.map(([key]) => key);
  }

  /** Images of rows by primary key: this transaction's first, the rest from `base` in one call. */
  async getRows(
    tableId: TableId,
    pks: readonly Uint8Array[],
    base: (missing: Uint8Array[]) => Promise<(Uint8Array | undefined)[]>,
  ): Promise<(Uint8Array | undefined)[]> {
    const out: (Uint8Array | undefined)[] = new Array(pks.length);
    const missing: number[] = [];
    pks.forEach((pk, i) => {
      const key = keys.rowKey(tableId, pk);
      if (this.tracking) this.tracking.reads.addKey(key, this.tracking.seenLsn);
      const pending = this.overlay.get(key);
      if (pending) out[i] = pending.value ?? undefined;
      else missing.push(i);
    });
    if (missing.length > 0) {
      const found = await base(missing.map((i) => pks[i]!));
      missing.forEach((i, j) => (out[i] = found[j]));
    }
    return out;
  }

  /** True when this transaction changed rows of the table (a cached scan would miss them). */
  touches(tableId: TableId): boolean {
    const span = keys.rowSpan(tableId, {});
    return this.overlay.range(span.gte, span.lt).length > 0;
  }

  /** Overlay entries in a span, keyed as the base yields them (the bytes after the id prefix). */
  private pendingIn(span: KeySpan, reverse: boolean): OverlayEntry[] {
    const pending = this.overlay.range(span.gte, span.lt).map((e) => ({ key: e.key.subarray(keys.ID_PREFIX_BYTES), value: e.value }));
    return reverse ? pending.reverse() : pending;
  }
}

async function* asPairs(base: AsyncIterable<Uint8Array[]>): AsyncIterable<[Uint8Array, Uint8Array][]> {
  for await (const batch of base) yield batch.map((key) => [key, EMPTY] as [Uint8Array, Uint8Array]);
}

/** The span of an index's entries starting with a prefix of what follows the index id. */
function prefixSpan(indexId: IndexId, indexKeyPrefix: Uint8Array | undefined): KeySpan {
  const gte = keys.indexPrefix(indexId, indexKeyPrefix);
  return { gte, lt: prefixUpperBound(gte) ?? keys.idRange(keys.KeySpace.IndexEntry, indexId).lt };
}

/** The write view a DML statement of a transaction validates against: the sequencer's plus the transaction's changes. */
export function layeredWriteView(base: WriteView, overlay: PendingOverlay, tracking: ReadTracking): WriteView {
  const layer = new Layer(overlay, tracking);
  return {
    catalog: base.catalog,
    async getRow(tableId, pk) {
      const [row] = await layer.getRows(tableId, [pk], async ([only]) => [await base.getRow(tableId, only!)]);
      return row;
    },
    getRows: (tableId, pks) => layer.getRows(tableId, pks, (missing) => base.getRows(tableId, missing)),
    rows: (tableId, bounds = {}) => layer.rows(tableId, bounds, base.rows(tableId, bounds)),
    indexEntries(indexId, indexKeyPrefix) {
      const span = prefixSpan(indexId, indexKeyPrefix);
      const prefixBytes = span.gte.length - keys.ID_PREFIX_BYTES;
      const entries = layer.indexEntries(span, false, prefixed(base.indexEntries(indexId, indexKeyPrefix), span.gte.subarray(keys.ID_PREFIX_BYTES)));
      return strip(entries, prefixBytes);
    },
    indexRange: (indexId, bounds = {}) => layer.indexEntries(keys.indexSpan(indexId, bounds), bounds.reverse ?? false, base.indexRange(indexId, bounds)),
    sequence: (name) => base.sequence(name),
  };
}

/** indexEntries() yields what follows the prefix; the layer merges whole suffixes after the index id. */
async function* prefixed(base: AsyncIterable<Uint8Array[]>, prefix: Uint8Array): AsyncIterable<Uint8Array[]> {
  for await (const batch of base) {
    yield batch.map((rest) => {
      const key = new Uint8Array(prefix.length + rest.length);
      key.set(prefix);
      key.set(rest, prefix.length);
      return key;
    });
  }
}

async function* strip(entries: AsyncIterable<Uint8Array[]>, prefixBytes: number): AsyncIterable<Uint8Array[]> {
  for await (const batch of entries) yield batch.map((key) => key.subarray(prefixBytes));
}

/** What a SELECT in a transaction reads: a snapshot with the transaction's changes laid over it. */
export class LayeredSource implements RowSource {
  private readonly layer: Layer;

  constructor(
    private readonly base: RowSource,
    overlay: PendingOverlay,
    tracking: ReadTracking | null,
  ) {
    this.layer = new Layer(overlay, tracking);
  }

  /**
   * No cached scans where reads are tracked (serializable): the cache would serve rows without
   * rows()/getRows() seeing which; nor for a table this transaction changed.
   */
  rowVersion(tableId: TableId): number | null {
    if (this.layer.tracked || this.layer.touches(tableId)) return null;
    return this.base.rowVersion(tableId);
  }

  rows(tableId: TableId, range: ByteRange): AsyncIterable<[Uint8Array, Uint8Array][]> {
    return this.layer.rows(tableId, range, this.base.rows(tableId, range));
  }

  indexEntries(indexId: IndexId, range: ByteRange): AsyncIterable<Uint8Array[]> {
    return this.layer.indexEntries(keys.indexSpan(indexId, range), range.reverse ?? false, this.base.indexEntries(indexId, range));
  }

  getRows(tableId: TableId, pks: readonly Uint8Array[]): Promise<(Uint8Array | undefined)[]> {
    return this.layer.getRows(tableId, pks, (missing) => this.base.getRows(tableId, missing));
  }

  vectorIndexSize(indexId: IndexId): number | undefined {
    return this.base.vectorIndexSize?.(indexId);
  }

  /** The index does not know this transaction's changes: a table it touched is scanned exactly. */
  vectorSearch(tableId: TableId, indexId: IndexId, vector: Float32Array, k: number, ef: number): Promise<VectorHit[]> | null {
    if (this.layer.touches(tableId) || !this.base.vectorSearch) return null;
    const hits = this.base.vectorSearch(tableId, indexId, vector, k, ef);
    // Which rows are nearest depends on every row of the table: read as a whole for conflicts.
    if (hits !== null) this.layer.note(keys.rowSpan(tableId, {}));
    return hits;
  }
}
