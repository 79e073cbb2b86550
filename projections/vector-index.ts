import type { IndexDef, TableDef } from '../core/catalog.js';
import { HnswIndex, type HnswMetric } from './hnsw-adapter.js';

/** The SQL metric of an hnsw index (opclass) and the hnswlib space that ranks the same way. */
export type VectorMetric = 'l2' | 'cosine' | 'inner_product';

export const HNSW_SPACE: Record<VectorMetric, HnswMetric> = { l2: 'l2', cosine: 'cosine', inner_product: 'ip' };

/** Defaults as pgvector's (m 16, ef_construction 64); cosine when no opclass was given. */
export const HNSW_DEFAULTS = { m: 16, efConstruction: 64, metric: 'cosine' as VectorMetric };
/** First capacity of a new index; it doubles as it fills. */
const INITIAL_CAPACITY = 1024;
const RANDOM_SEED = 100;

/** What the vector projection needs to know of an hnsw index (JSON: it goes in the checkpoint manifest). */
export interface VectorIndexSpec {
  readonly indexId: number;
  readonly name: string;
  readonly tableId: number;
  readonly columnId: number;
  readonly dimensions: number;
  readonly metric: VectorMetric;
  readonly m: number;
  readonly efConstruction: number;
}

export function metricOf(index: IndexDef): VectorMetric {
  const metric = index.options.metric;
  return metric === 'l2' || metric === 'inner_product' || metric === 'cosine' ? metric : HNSW_DEFAULTS.metric;
}

/** The hnsw indexes of a table definition. */
export function hnswSpecs(def: TableDef): VectorIndexSpec[] {
  return def.indexes.filter((i) => i.kind === 'hnsw').map((index) => {
    const column = def.columns.find((c) => c.id === index.columnIds[0]);
    if (!column) throw new Error(`assertion failed: hnsw index ${index.name} on a missing column`);
    const num = (v: number | string | undefined, d: number): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : d);
    return {
      indexId: index.id,
      name: index.name,
      tableId: def.id,
      columnId: column.id,
      dimensions: column.type.dimension ?? 0,
      metric: metricOf(index),
      m: num(index.options.m, HNSW_DEFAULTS.m),
      efConstruction: num(index.options.ef_construction, HNSW_DEFAULTS.efConstruction),
    };
  });
}

export interface VectorHit {
  readonly pk: Uint8Array;
  readonly distance: number;
}

/**
 * One hnsw index with its label <-> primary key map. hnswlib labels are integers, rows are keyed
 * by encoded primary keys: every upsert takes a fresh label (a deleted slot is reused for it), so
 * a label found by a search always names the row version it was added for, or a deleted one.
 */
export class VectorIndex {
  private readonly labelOfPk = new Map<string, number>();
  private readonly pkOfLabel = new Map<number, Uint8Array>();
  private deletedSlots = 0;

  private constructor(readonly spec: VectorIndexSpec, private hnsw: HnswIndex | null, private nextLabel: number) {}

  static empty(spec: VectorIndexSpec): VectorIndex {
    return new VectorIndex(spec, null, 0);
  }

  /** From a checkpoint: the graph file (absent when the index was empty) and its label map. */
  static restore(spec: VectorIndexSpec, file: string | null, labels: readonly (readonly [number, Uint8Array])[], nextLabel: number): VectorIndex {
    const hnsw = file === null ? null : HnswIndex.read(file, initOptions(spec, INITIAL_CAPACITY));
    const index = new VectorIndex(spec, hnsw, nextLabel);
    for (const [label, pk] of labels) {
      index.labelOfPk.set(hex(pk), label);
      index.pkOfLabel.set(label, pk);
    }
    index.deletedSlots = (hnsw?.slotCount ?? 0) - labels.length;
    return index;
  }

  get size(): number {
    return this.pkOfLabel.size;
  }

  get labelCounter(): number {
    return this.nextLabel;
  }

  labels(): IterableIterator<[number, Uint8Array]> {
    return this.pkOfLabel.entries();
  }

  /** Sets the vector of a row (NULL or a vector of other dimensions: the row is not indexed). */
  upsert(pk: Uint8Array, vector: Float32Array | null): void {
    this.remove(pk);
    if (vector === null || vector.length !== this.spec.dimensions || vector.length === 0) return;
    // A zero vector has no cosine distance (NaN) to anything: like pgvector, it is not indexed.
    if (this.spec.metric === 'cosine' && vector.every((x) => x === 0)) return;
    const hnsw = this.graph();
    const reuse = this.deletedSlots > 0;
    if (!reuse && hnsw.slotCount >= hnsw.capacity) hnsw.resize({ elementCountMax: hnsw.capacity * 2 });
    const label = this.nextLabel++;
    hnsw.add({ vector, label, reuseDeletedSlot: reuse });
    if (reuse) this.deletedSlots -= 1;
    this.labelOfPk.set(hex(pk), label);
    this.pkOfLabel.set(label, pk);
  }

  remove(pk: Uint8Array): void {
    const key = hex(pk);
    const label = this.labelOfPk.get(key);
    if (label === undefined) return;
    this.hnsw!.markDeleted(label);
    this.deletedSlots += 1;
    this.labelOfPk.delete(key);
    this.pkOfLabel.delete(label);
  }

  clear(): void {
    this.hnsw = null;
    this.labelOfPk.clear();
    this.pkOfLabel.clear();
    this.deletedSlots = 0;
  }

  /** The `k` nearest rows by hnswlib's ranking, searched with beam `ef`. */
  search(vector: Float32Array, k: number, ef: number): VectorHit[] {
    if (this.hnsw === null || this.size === 0 || vector.length !== this.spec.dimensions) return [];
    const hits = this.hnsw.search({ vector, k: Math.min(k, this.size), ef });
    const out: VectorHit[] = [];
    for (const hit of hits) {
      const pk = this.pkOfLabel.get(hit.label);
      if (pk) out.push({ pk, distance: hit.distance });
    }
    return out;
  }

  async write(file: string): Promise<boolean> {
    if (this.hnsw === null) return false;
    await this.hnsw.write(file);
    return true;
  }

  private graph(): HnswIndex {
    this.hnsw ??= HnswIndex.create(initOptions(this.spec, INITIAL_CAPACITY));
    return this.hnsw;
  }
}

function initOptions(spec: VectorIndexSpec, elementCountMax: number) {
  return { metric: HNSW_SPACE[spec.metric], dimensions: spec.dimensions, elementCountMax, m: spec.m, efConstruction: spec.efConstruction, randomSeed: RANDOM_SEED };
}

function hex(pk: Uint8Array): string {
  return Buffer.from(pk).toString('hex');
}
