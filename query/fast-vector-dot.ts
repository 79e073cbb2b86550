import { cosineDistanceOfNorms } from './functions/vector-math.js';

/**
 * The direct top-k's cosine ranking (fast-vector.ts cosineRank) with its float32 dot products in
 * WebAssembly: the same numbers as vector-math.ts's loops, several times faster.
 *
 * Why the same numbers: the JS loops sum `acc = fround(acc + fround(a[i] * b[i]))` in order. A
 * double holds the product of two float32 values exactly, so fround of it is float32 multiplication;
 * a float32 sum computed in double and rounded to float32 is float32 addition too (rounding twice
 * through a format of at least 2 × 24 + 2 bits gives the correctly rounded result). WebAssembly's
 * f32.mul and f32.add are IEEE 754 float32 operations (no flush of subnormals, no fused
 * multiply-add), in the same order, from the same +0 start. Why faster: each step of the JS loop
 * converts float32 to double and back on the chain of dependent additions; f32.add does not.
 *
 * The module (hand-assembled; its text form below): one page of memory (grown when two vectors do
 * not fit), `dot(a, b, n)`: the sum above over n floats at byte offsets a and b.
 *
 *   (module
 *     (memory (export "memory") 1)
 *     (func (export "dot") (param $a i32) (param $b i32) (param $n i32) (result f32) (local $acc f32)
 *       (block $done
 *         (br_if $done (i32.eqz (local.get $n)))
 *         (loop $next
 *           (local.set $acc (f32.add (local.get $acc) (f32.mul (f32.load (local.get $a)) (f32.load (local.get $b)))))
 *           (local.set $a (i32.add (local.get $a) (i32.const 4)))
 *           (local.set $b (i32.add (local.get $b) (i32.const 4)))
 *           (br_if $next (local.tee $n (i32.sub (local.get $n) (i32.const 1))))))
 *       (local.get $acc)))
 */
const DOT_BODY = [
  ...[0x01, 0x01, 0x7d], // one local: $acc f32
  ...[0x02, 0x40, 0x20, 0x02, 0x45, 0x0d, 0x00], // block $done; br_if $done (n == 0)
  ...[0x03, 0x40], // loop $next
  ...[0x20, 0x03, 0x20, 0x00, 0x2a, 0x02, 0x00, 0x20, 0x01, 0x2a, 0x02, 0x00, 0x94, 0x92, 0x21, 0x03], // acc = acc + a[i] * b[i]
  ...[0x20, 0x00, 0x41, 0x04, 0x6a, 0x21, 0x00, 0x20, 0x01, 0x41, 0x04, 0x6a, 0x21, 0x01], // a += 4; b += 4
  ...[0x20, 0x02, 0x41, 0x01, 0x6b, 0x22, 0x02, 0x0d, 0x00], // br_if $next (--n != 0)
  ...[0x0b, 0x0b, 0x20, 0x03, 0x0b], // end loop, end block, acc, end
];
const section = (id: number, bytes: readonly number[]): number[] => [id, bytes.length, ...bytes];
const ascii = (text: string): number[] => [text.length, ...Buffer.from(text, 'latin1')];
const DOT_MODULE = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
  ...section(1, [0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x01, 0x7d]), // types: (i32, i32, i32) -> f32
  ...section(3, [0x01, 0x00]), // functions: dot has type 0
  ...section(5, [0x01, 0x00, 0x01]), // memory: at least 1 page
  ...section(7, [0x02, ...ascii('memory'), 0x02, 0x00, ...ascii('dot'), 0x00, 0x00]), // exports
  ...section(10, [0x01, DOT_BODY.length, ...DOT_BODY]), // code
]);

const PAGE_BYTES = 65_536;

/** The parts of the WebAssembly API used here (the project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object) => { readonly exports: object };
}
const wasm = (globalThis as unknown as { readonly WebAssembly: WasmApi }).WebAssembly;

/**
 * `1 - cos` of float32 vectors against one query at a time, as cosineDistanceOfNorms computes it.
 * The query is copied into the module's memory when it changes (once per search), each row when it
 * is ranked. Synchronous throughout: nothing else runs between a copy and the dot product.
 */
export class CosineRanker {
  private readonly memory: WasmMemory;
  private readonly dot: (a: number, b: number, n: number) => number;
  private floats: Float32Array;
  /** The query whose floats are at offset 0 of memory now (null: none yet, or memory grew). */
  private loaded: Float32Array | null = null;

  constructor() {
    const exports = new wasm.Instance(new wasm.Module(DOT_MODULE)).exports as {
      readonly memory: WasmMemory;
      readonly dot: (a: number, b: number, n: number) => number;
    };
    this.memory = exports.memory;
    this.dot = exports.dot;
    this.floats = new Float32Array(this.memory.buffer);
  }

  /** float32SquaredNorm(query), once per search: the query's floats are copied afresh (the search's rows are ranked against them next). */
  squaredNorm(query: Float32Array): number {
    this.loaded = null;
    this.load(query);
    return this.dot(0, 0, query.length);
  }

  /** cosineDistanceOfNorms(row, query, rowNorm, queryNorm): the same number (and error, for other dimensions). */
  distance(row: Float32Array, query: Float32Array, rowNorm: number, queryNorm: number): number {
    if (row.length !== query.length) return cosineDistanceOfNorms(row, query, rowNorm, queryNorm);
    this.load(query);
    const n = query.length;
    this.floats.set(row, n);
    const dot = this.dot(n * 4, 0, n);
    // cosineDistanceOfNorms' own lines after its loop.
    const sim = dot / Math.sqrt(rowNorm * queryNorm);
    if (Number.isNaN(sim)) return NaN;
    return 1 - Math.max(-1, Math.min(1, sim));
  }

  /** Puts `query` at offset 0, room for a row of its length after it. */
  private load(query: Float32Array): void {
    if (this.loaded === query) return;
    const bytes = query.length * 2 * Float32Array.BYTES_PER_ELEMENT;
    if (bytes > this.memory.buffer.byteLength) {
      this.memory.grow(Math.ceil((bytes - this.memory.buffer.byteLength) / PAGE_BYTES));
      this.floats = new Float32Array(this.memory.buffer);
    }
    this.floats.set(query, 0);
    this.loaded = query;
  }
}
