/**
 * The one file that knows hnswlib-node. Everything else sees `HnswIndex`: options objects instead
 * of positional numbers, plain arrays of labels and distances, errors wrapped once with `cause`.
 */
import { createRequire } from 'node:module';
import { SvcError } from '../core/errors.js';

export type HnswMetric = 'l2' | 'cosine' | 'ip';

interface NativeIndex {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number; allowReplaceDeleted: boolean }): void;
  readIndexSync(filename: string, allowReplaceDeleted: boolean): void;
  writeIndex(filename: string): Promise<boolean>;
  resizeIndex(maxElements: number): void;
  addPoint(point: number[], label: number, replaceDeleted: boolean): void;
  markDelete(label: number): void;
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { distances: number[]; neighbors: number[] };
  getMaxElements(): number;
  getCurrentCount(): number;
  setEf(ef: number): void;
}

interface NativeModule {
  HierarchicalNSW: new (space: HnswMetric, dims: number) => NativeIndex;
}

const native = createRequire(import.meta.url)('hnswlib-node') as NativeModule;

export interface HnswInitOptions {
  readonly metric: HnswMetric;
  readonly dimensions: number;
  readonly elementCountMax: number;
  readonly m: number;
  readonly efConstruction: number;
  readonly randomSeed: number;
}

export interface HnswHit {
  readonly label: number;
  /** hnswlib's float32 distance (l2: squared; ip: 1 - dot; cosine: 1 - cos). Only for ranking. */
  readonly distance: number;
}

/** One hnsw graph. Deleted slots are reused by later inserts (allowReplaceDeleted). */
export class HnswIndex {
  private constructor(
    private readonly index: NativeIndex,
    readonly options: HnswInitOptions,
  ) {}

  static create(options: HnswInitOptions): HnswIndex {
    const index = wrap('create', () => new native.HierarchicalNSW(options.metric, options.dimensions));
    wrap('initIndex', () =>
      index.initIndex({
        maxElements: options.elementCountMax,
        m: options.m,
        efConstruction: options.efConstruction,
        randomSeed: options.randomSeed,
        allowReplaceDeleted: true,
      }),
    );
    return new HnswIndex(index, options);
  }

  /** Reads an index written by `write` (synchronous: called once per index at start). */
  static read(file: string, options: HnswInitOptions): HnswIndex {
    const index = wrap('create', () => new native.HierarchicalNSW(options.metric, options.dimensions));
    wrap('readIndex', () => index.readIndexSync(file, true));
    return new HnswIndex(index, { ...options, elementCountMax: index.getMaxElements() });
  }

  /** Slots in use, deleted ones included (they are reused before the index grows). */
  get slotCount(): number {
    return this.index.getCurrentCount();
  }

  get capacity(): number {
    return this.index.getMaxElements();
  }

  resize(options: { elementCountMax: number }): void {
    wrap('resizeIndex', () => this.index.resizeIndex(options.elementCountMax));
  }

  add(options: { vector: Float32Array; label: number; reuseDeletedSlot: boolean }): void {
    wrap('addPoint', () => this.index.addPoint(Array.from(options.vector), options.label, options.reuseDeletedSlot));
  }

  markDeleted(label: number): void {
    wrap('markDelete', () => this.index.markDelete(label));
  }

  /** Up to `k` nearest labels, nearest first; `ef` is the search beam (raised to k when lower). */
  search(options: { vector: Float32Array; k: number; ef: number }): HnswHit[] {
    const k = Math.min(options.k, this.index.getMaxElements());
    const labels = new Float64Array(Math.max(k, 0));
    const distances = new Float64Array(Math.max(k, 0));
    const found = this.searchInto(options, labels, distances, 0);
    return Array.from({ length: found }, (_v, i) => ({ label: labels[i]!, distance: distances[i]! }));
  }

  /**
   * search() written into `labels` and `distances` from `at` (room for min(k, capacity) hits):
   * how many it found. The hits are ranked as search() ranks them (a stable sort by distance of
   * hnswlib's order), so both give the same answer. The query goes to hnswlib through one scratch
   * array per graph (its binding reads a plain array), not a new array per search.
   */
  searchInto(options: { vector: Float32Array; k: number; ef: number }, labels: Float64Array, distances: Float64Array, at: number): number {
    const k = Math.min(options.k, this.index.getMaxElements());
    if (k <= 0) return 0;
    this.index.setEf(Math.max(options.ef, k));
    const query = this.queryArray(options.vector);
    const found = wrap('searchKnn', () => this.index.searchKnn(query, k));
    const order = found.neighbors.map((_label, i) => i);
    order.sort((a, b) => found.distances[a]! - found.distances[b]!);
    order.forEach((from, i) => {
      labels[at + i] = found.neighbors[from]!;
      distances[at + i] = found.distances[from]!;
    });
    return order.length;
  }

  private scratch: number[] = [];

  private queryArray(vector: Float32Array): number[] {
    if (this.scratch.length !== vector.length) this.scratch = new Array<number>(vector.length).fill(0);
    const query = this.scratch;
    for (let i = 0; i < vector.length; i++) query[i] = vector[i]!;
    return query;
  }

  async write(file: string): Promise<void> {
    try {
      await this.index.writeIndex(file);
    } catch (error) {
      throw new SvcError('STORAGE_UNAVAILABLE', `cannot write the hnsw index file ${file}`, { file }, error);
    }
  }
}

function wrap<T>(operation: string, fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new SvcError('STORAGE_UNAVAILABLE', `hnswlib ${operation} failed: ${(error as Error).message}`, { operation }, error);
  }
}
