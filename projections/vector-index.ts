import type { IndexDef, TableDef } from '../core/catalog.js';
import { assert } from '../core/errors.js';
import type { HnswInitOptions, HnswMetric } from './hnsw-adapter.js';
import { ADD_OP, DELETE_OP, REUSE_OP, type HnswSearchResult } from './hnsw-protocol.js';
import type { HnswWorker } from './hnsw-worker-client.js';
import { PROJECTION_LIMITS } from './limits.js';

/** The SQL metric of an hnsw index (opclass) and the hnswlib space that ranks the same way. */
export type VectorMetric = 'l2' | 'cosine' | 'inner_product';

export const HNSW_SPACE: Record<VectorMetric, HnswMetric> = { l2: 'l2', cosine: 'cosine', inner_product: 'ip' };

/** Defaults as pgvector's (m 16, ef_construction 64); cosine when no opclass was given. */
export const HNSW_DEFAULTS = { m: 16, efConstruction: 64, metric: 'cosine' as VectorMetric };
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
  return def.indexes
    .filter((i) => i.kind === 'hnsw')
    .map((index) => {
      const column = def.columns.find((c) => c.id === index.columnIds[0]);
      assert(column, `hnsw index ${index.name} on a missing column`);
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
 * One hnsw index: its label <-> primary key map here, its graph in the hnsw worker thread.
 * hnswlib labels are integers, rows are keyed by encoded primary keys: every upsert takes a fresh
 * label (a deleted slot is reused for it), so a label found by a search always names the row
 * version it was added for, or a deleted one. Changes are buffered and posted in order; a search,
 * a write or `flush` posts what is buffered first.
 * A search sees the state it was issued against: the worker runs it before any later change, and
 * the labels of its answer name rows through the maps as they were when it was issued. A label
 * removed while a search issued earlier is unanswered is kept (`retired`) until those are answered:
 * its answer may come back after the change was applied here (a busy or descheduled worker thread).
 */
export class VectorIndex {
  private readonly labelOfPk = new Map<string, number>();
  private pkOfLabel = new Map<number, Uint8Array>();
  /** Searches issued so far (a search's number is the count after it), and the lowest number not answered yet. */
  private searchesIssued = 0;
  private oldestUnanswered = 1;
  /** Numbers above oldestUnanswered already answered (answers come back in order: rarely any). */
  private readonly answeredAhead = new Set<number>();
  /** Labels removed while searches up to `upTo` were unanswered, oldest first: dropped once those are answered. */
  private retired: { readonly upTo: number; readonly pks: Map<number, Uint8Array> }[] = [];
  private deletedSlots = 0;
  private hasGraph: boolean;
  private ops: number[] = [];
  private opLabels: number[] = [];
  private opVectors: Float32Array[] = [];

  private constructor(
    readonly spec: VectorIndexSpec,
    private readonly worker: HnswWorker,
    hasGraph: boolean,
    private nextLabel: number,
  ) {
    this.hasGraph = hasGraph;
  }

  static empty(spec: VectorIndexSpec, worker: HnswWorker): VectorIndex {
    return new VectorIndex(spec, worker, false, 0);
  }

  /** From a checkpoint: the graph file (absent when the index was empty) and its label map. */
  static async restore(
    spec: VectorIndexSpec,
    worker: HnswWorker,
    file: string | null,
    labels: readonly (readonly [number, Uint8Array])[],
    nextLabel: number,
  ): Promise<VectorIndex> {
    const slots =
      file === null
        ? 0
        : await worker.call<number>({
            kind: 'read',
            indexId: spec.indexId,
            file,
            options: initOptions(spec, PROJECTION_LIMITS.vectorIndexElementCountInitial),
          });
    const index = new VectorIndex(spec, worker, file !== null, nextLabel);
    for (const [label, pk] of labels) {
      index.labelOfPk.set(hex(pk), label);
      index.pkOfLabel.set(label, pk);
    }
    index.deletedSlots = slots - labels.length;
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
    if (!this.hasGraph) {
      this.worker.post({ kind: 'create', indexId: this.spec.indexId, options: initOptions(this.spec, PROJECTION_LIMITS.vectorIndexElementCountInitial) });
      this.hasGraph = true;
    }
    const reuse = this.deletedSlots > 0;
    const label = this.nextLabel++;
    this.buffer(reuse ? REUSE_OP : ADD_OP, label, vector);
    if (reuse) this.deletedSlots -= 1;
    this.labelOfPk.set(hex(pk), label);
    // A copy: the key may be a view of its whole decoded log record, which it would keep alive.
    this.pkOfLabel.set(label, new Uint8Array(pk));
  }

  remove(pk: Uint8Array): void {
    const key = hex(pk);
    const label = this.labelOfPk.get(key);
    if (label === undefined) return;
    this.buffer(DELETE_OP, label, null);
    this.deletedSlots += 1;
    this.labelOfPk.delete(key);
    if (this.searching()) this.retiredFor(this.searchesIssued).set(label, this.pkOfLabel.get(label)!);
    this.pkOfLabel.delete(label);
  }

  /** Empties the index and drops its graph (TRUNCATE, or the index or its table is gone). */
  clear(): void {
    this.discardBuffer();
    if (this.hasGraph) this.worker.post({ kind: 'drop', indexId: this.spec.indexId });
    this.hasGraph = false;
    this.labelOfPk.clear();
    // Searches issued before keep reading the labels they may find: the whole map retires at once.
    if (this.searching() && this.pkOfLabel.size > 0) {
      this.retired.push({ upTo: this.searchesIssued, pks: this.pkOfLabel });
      this.pkOfLabel = new Map();
    } else this.pkOfLabel.clear();
    this.deletedSlots = 0;
  }

  /** Posts the buffered changes to the worker. */
  flush(): void {
    if (this.ops.length === 0) return;
    const dims = this.spec.dimensions;
    const vectors = new Float32Array(this.opVectors.length * dims);
    this.opVectors.forEach((v, i) => vectors.set(v, i * dims));
    const ops = Uint8Array.from(this.ops);
    const labels = Float64Array.from(this.opLabels);
    this.discardBuffer();
    this.worker.post({ kind: 'apply', indexId: this.spec.indexId, ops, labels, vectors }, [ops.buffer, labels.buffer, vectors.buffer]);
  }

  /** The `k` nearest rows by hnswlib's ranking, searched with beam `ef` in the worker thread. */
  async search(vector: Float32Array, k: number, ef: number): Promise<VectorHit[]> {
    if (!this.hasGraph || this.size === 0 || vector.length !== this.spec.dimensions) return [];
    this.flush();
    const number = ++this.searchesIssued;
    try {
      const found = await this.worker.call<HnswSearchResult>({ kind: 'search', indexId: this.spec.indexId, vector, k: Math.min(k, this.size), ef });
      const { labels, distances } = found;
      const pkOfLabel = this.pkOfLabel;
      const out: VectorHit[] = [];
      // A plain loop: forEach called a closure per hit from a builtin (no inlining).
      for (let i = 0; i < labels.length; i++) {
        // A label found was in the graph when the search was issued: its row is here, or retired since.
        const pk = pkOfLabel.get(labels[i]!) ?? this.retiredPk(labels[i]!);
        if (pk) out.push({ pk, distance: distances[i]! });
      }
      return out;
    } finally {
      this.answered(number);
    }
  }

  async write(file: string): Promise<boolean> {
    if (!this.hasGraph) return false;
    this.flush();
    return this.worker.call<boolean>({ kind: 'write', indexId: this.spec.indexId, file });
  }

  /** Whether a search issued so far is unanswered (a label removed now may be in its answer). */
  private searching(): boolean {
    return this.oldestUnanswered <= this.searchesIssued;
  }

  /** The retired labels that searches up to `upTo` may find. */
  private retiredFor(upTo: number): Map<number, Uint8Array> {
    const last = this.retired[this.retired.length - 1];
    if (last !== undefined && last.upTo === upTo) return last.pks;
    const pks = new Map<number, Uint8Array>();
    this.retired.push({ upTo, pks });
    return pks;
  }

  private retiredPk(label: number): Uint8Array | undefined {
    for (const { pks } of this.retired) {
      const pk = pks.get(label);
      if (pk) return pk;
    }
    return undefined;
  }

  /** Search `number` is answered: the labels only searches up to it could find are dropped. */
  private answered(number: number): void {
    if (number !== this.oldestUnanswered) {
      this.answeredAhead.add(number);
      return;
    }
    this.oldestUnanswered += 1;
    while (this.answeredAhead.delete(this.oldestUnanswered)) this.oldestUnanswered += 1;
    while (this.retired.length > 0 && this.retired[0]!.upTo < this.oldestUnanswered) this.retired.shift();
  }

  private buffer(op: number, label: number, vector: Float32Array | null): void {
    this.ops.push(op);
    this.opLabels.push(label);
    if (vector !== null) this.opVectors.push(vector);
    if (this.ops.length >= PROJECTION_LIMITS.vectorOpsPerMessageMax) this.flush();
  }

  private discardBuffer(): void {
    this.ops = [];
    this.opLabels = [];
    this.opVectors = [];
  }
}

function initOptions(spec: VectorIndexSpec, elementCountMax: number): HnswInitOptions {
  return {
    metric: HNSW_SPACE[spec.metric],
    dimensions: spec.dimensions,
    elementCountMax,
    m: spec.m,
    efConstruction: spec.efConstruction,
    randomSeed: RANDOM_SEED,
  };
}

function hex(pk: Uint8Array): string {
  return Buffer.from(pk).toString('hex');
}
