import type { HnswInitOptions } from './hnsw-adapter.js';

/**
 * Messages between the vector projection (main thread) and the hnsw worker thread. The worker
 * applies them in the order they were posted, so a search sees every change posted before it.
 */
export type HnswCommand =
  | { readonly kind: 'create'; readonly indexId: number; readonly options: HnswInitOptions }
  /** Reads a graph file written by `write`; answers the slots it holds (deleted ones included). */
  | { readonly kind: 'read'; readonly indexId: number; readonly file: string; readonly options: HnswInitOptions }
  /**
   * Changes in order: op i adds (ADD_OP, reusing a deleted slot when REUSE_OP) or marks deleted
   * (DELETE_OP) `labels[i]`; adds take their vectors from `vectors`, `dimensions` floats each, in order.
   */
  | { readonly kind: 'apply'; readonly indexId: number; readonly ops: Uint8Array; readonly labels: Float64Array; readonly vectors: Float32Array }
  | { readonly kind: 'drop'; readonly indexId: number }
  | { readonly kind: 'search'; readonly indexId: number; readonly vector: Float32Array; readonly k: number; readonly ef: number }
  /**
   * Searches issued one after another, packed (hnsw-worker-client.ts): search i has the request id
   * `firstId + i`, its graph, k and beam in `params` (SEARCH_PARAMS numbers each: indexId, k, ef,
   * dimensions) and its vector next in `vectors`. Answered by HnswSearchesResponse messages, in order.
   */
  | { readonly kind: 'searches'; readonly firstId: number; readonly params: Float64Array; readonly vectors: Float32Array }
  /** Writes the graph to `file`; answers false when the index has no graph. */
  | { readonly kind: 'write'; readonly indexId: number; readonly file: string }
  /** Answers once everything posted before it was applied (or with the first failure since). */
  | { readonly kind: 'sync' };

/** Numbers per search in a 'searches' command: indexId, k, ef, dimensions. */
export const SEARCH_PARAMS = 4;

export const ADD_OP = 0;
export const REUSE_OP = 1;
export const DELETE_OP = 2;

/** A command with its request id; id 0: no answer wanted (a failure is reported by the next answer). */
export interface HnswRequest {
  readonly id: number;
  readonly command: HnswCommand;
}

/** Typed arrays, moved (not copied) back to the main thread; hnswlib's float32 distances fit a Float64Array exactly. */
export interface HnswSearchResult {
  readonly labels: Float64Array;
  readonly distances: Float64Array;
}

export type HnswResponse =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly message: string }
  | HnswSearchesResponse;

/**
 * The answers to consecutive searches of a 'searches' command, ids `firstId` on: search i found
 * `counts[i]` hits, nearest first, next in `labels` and `distances`; a count of -1 failed with the
 * next message of `failures`. Two typed arrays per message instead of two per search.
 */
export interface HnswSearchesResponse {
  readonly kind: 'searches';
  readonly firstId: number;
  readonly counts: Int32Array;
  readonly labels: Float64Array;
  readonly distances: Float64Array;
  readonly failures: readonly string[];
}

/**
 * What crosses the thread boundary: requests in posting order, and the answers to one such message
 * together. Searches issued while the event loop handles one round of I/O travel in one message
 * (one wake-up of the worker and one of the main thread instead of one per search under load).
 */
export type HnswRequestMessage = readonly HnswRequest[];
export type HnswResponseMessage = readonly HnswResponse[];
