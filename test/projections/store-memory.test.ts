import { afterEach, describe, expect, it } from 'vitest';
import { openStateStore, STORE_OPTIONS, type StateStore } from '../../projections/index.js';
import { tempDir } from '../helpers/stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function store(): Promise<StateStore> {
  const { dir, remove } = await tempDir('svcdb-store-memory-');
  const opened = await openStateStore(dir);
  cleanups.push(remove, () => opened.close());
  return opened;
}

const MIB = 1024 * 1024;

describe('the serving store holds a bounded memtable under a steady stream of small writes', () => {
  it('LevelDB memory stays within two 4 MiB write buffers while 24 MiB is written, and every row reads back', async () => {
    const db = await store();
    expect(db.memoryBytes).toBeDefined();
    // The budget docs/configuration.md states: a 4 MiB write buffer, two at once while one flushes.
    const bufferBytes = 4 * MIB;
    expect(STORE_OPTIONS.writeBufferSize).toBeLessThanOrEqual(bufferBytes);
    // Row-sized entries (~64 bytes of memtable each, as a single-row insert of the mixed load makes)
    // until 24 MiB has gone through.
    const key = (i: number): Buffer => Buffer.from(`row:${String(i).padStart(10, '0')}`);
    const value = (i: number): Buffer => Buffer.from(`value-${i}-${'x'.repeat(16)}`);
    let written = 0;
    let most = 0;
    let i = 0;
    while (written < 24 * MIB) {
      const ops = [];
      for (let j = 0; j < 500; j++, i++) {
        const op = { type: 'put' as const, key: key(i), value: value(i) };
        written += op.key.length + op.value.length;
        ops.push(op);
      }
      await db.write(ops);
      most = Math.max(most, db.memoryBytes!());
    }
    // The memtable filling and the one being flushed, plus LevelDB's arena blocks and skiplist nodes.
    expect(most).toBeLessThanOrEqual(2 * bufferBytes + MIB);
    for (const at of [0, Math.floor(i / 2), i - 1]) expect(Buffer.from((await db.get(key(at)))!).equals(value(at))).toBe(true);
  });
});
