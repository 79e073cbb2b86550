import { afterEach } from 'vitest';
import type { KvOp, StateStore } from '../../projections/index.js';
import { PACKED_DEL, PACKED_PUT } from '../../projections/state-store.js';
import { tempDir } from './stack.js';

/**
 * What the replay store tests share: stores opened in temp dirs and closed after each test (with
 * any other cleanup given to `later`), ops packed as the replay workers pack them, and a store's
 * contents as hex pairs to compare.
 */
export function storesClosedAfterEach(prefix: string): {
  opened: (open: (dir: string) => Promise<StateStore>) => Promise<StateStore>;
  later: (cleanup: () => Promise<void>) => void;
} {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const later = (cleanup: () => Promise<void>): void => void cleanups.push(cleanup);
  const opened = async (open: (dir: string) => Promise<StateStore>): Promise<StateStore> => {
    const { dir, remove } = await tempDir(prefix);
    const store = await open(`${dir}/state`);
    cleanups.push(remove, () => store.close());
    return store;
  };
  return { opened, later };
}

/** Packed ops (state-store.ts PACKED_PUT / PACKED_DEL) from ordinary ones. */
export function pack(ops: readonly KvOp[]): Uint8Array {
  const parts: number[] = [];
  const u32 = (n: number) => parts.push(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  for (const op of ops) {
    parts.push(op.type === 'put' ? PACKED_PUT : PACKED_DEL);
    u32(op.key.length);
    for (const byte of op.key) parts.push(byte);
    if (op.type === 'put') {
      u32(op.value.length);
      for (const byte of op.value) parts.push(byte);
    }
  }
  return Uint8Array.from(parts);
}

/** Every key and value of the store, as hex, in key order. */
export async function contents(store: StateStore): Promise<[string, string][]> {
  const out: [string, string][] = [];
  for await (const batch of store.entries({})) for (const [k, v] of batch) out.push([Buffer.from(k).toString('hex'), Buffer.from(v).toString('hex')]);
  return out;
}
