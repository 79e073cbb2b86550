// classic-level's native batches as the LevelDB store (state-store.ts) fills them: the views its
// keys and values go through, and the prepared write (StateStore.prepare).

/** One key/value operation of a store write (StateStore.write). */
export type KvOp = { readonly type: 'put'; readonly key: Uint8Array; readonly value: Uint8Array } | { readonly type: 'del'; readonly key: Uint8Array };

/** A batch from StateStore.prepare: written by one write() whose ops start with its `count` ops, or discarded. */
export interface PreparedWrite {
  /** How many ops it holds (the first ones of the write it is given to). */
  readonly count: number;
  /** Frees it unwritten (idempotent; a batch already written stays written). */
  discard(): void;
}

/** Keys and values up to this long are handed to the native batch through reused views (see viewOf). */
const REUSED_VIEW_BYTES_MAX = 256;
export const reusedKeyViews: (Uint8Array | undefined)[] = [];
export const reusedValueViews: (Uint8Array | undefined)[] = [];

/**
 * The bytes at [from, from + length) as a Uint8Array for one native call, which copies them at
 * once: a short one is copied into a view of that length kept for reuse, because a new view per
 * key and per value (a million per 50,000 replayed records) made the garbage collector the
 * largest cost of replay's main thread.
 */
export function viewOf(ops: Uint8Array, from: number, length: number, reused: (Uint8Array | undefined)[]): Uint8Array {
  if (length > REUSED_VIEW_BYTES_MAX) return ops.subarray(from, from + length);
  let view = reused[length];
  if (view === undefined) reused[length] = view = new Uint8Array(length);
  for (let i = 0; i < length; i++) view[i] = ops[from + i]!;
  return view;
}

/**
 * `bytes` for one native call: as it is when it is a view into a larger buffer or longer than V8
 * keeps typed arrays on its heap (a bulk insert's keys and images are views of shared chunks:
 * copying them byte by byte was most of write()'s own time), else copied as viewOf does (a small
 * array on V8's heap would get a backing store of its own when native code reads it).
 */
function nativeView(bytes: Uint8Array, reused: (Uint8Array | undefined)[]): Uint8Array {
  return bytes.byteOffset !== 0 || bytes.length > ON_HEAP_TYPED_ARRAY_BYTES_MAX ? bytes : viewOf(bytes, 0, bytes.length, reused);
}

/** V8's typed_array_max_size_in_heap: arrays up to this long may live on the JS heap. */
const ON_HEAP_TYPED_ARRAY_BYTES_MAX = 64;

/**
 * ops[from..] into a native batch. Short keys and values go through reused views (viewOf): the
 * native call copies them at once, and a fresh small array handed to it costs a backing store of
 * its own (bulk inserts: GC).
 */
export function putOps(batch: NativeBatch, ops: readonly KvOp[], from: number): void {
  for (let i = from; i < ops.length; i++) {
    const op = ops[i]!;
    if (op.type === 'put') batch._put(nativeView(op.key, reusedKeyViews), nativeView(op.value, reusedValueViews));
    else batch._del(nativeView(op.key, reusedKeyViews));
  }
}

/** The LevelDB store's prepared write: a native batch holding the first `count` ops of a write to come. */
export class LevelPreparedWrite implements PreparedWrite {
  constructor(
    /** The store that made it (only that store's write takes its batch). */
    readonly owner: object,
    private batch: NativeBatch | null,
    readonly count: number,
  ) {}

  /** The batch, once (null: taken, discarded, or prepared while the store was closed). */
  take(): NativeBatch | null {
    const batch = this.batch;
    this.batch = null;
    return batch;
  }

  discard(): void {
    void this.take()
      ?.close()
      .catch(() => undefined);
  }
}

/** The parts of classic-level's chained batch used by packedBatch (implementor methods: no per-op checks or events). */
export interface NativeBatch {
  _put(key: Uint8Array, value: Uint8Array): void;
  _del(key: Uint8Array): void;
  _write(options: object): Promise<void>;
  /** The public close: frees the native batch and detaches it from the database (which holds every open batch). */
  close(): Promise<void>;
}
