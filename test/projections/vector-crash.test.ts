import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodeKey } from '../../core/key-encoding.js';
import { runUntilKilled } from '../helpers/kill.js';
import { openStack, tempDir } from '../helpers/stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writer = path.join(root, 'dist/test/fixtures/vector-crash-writer.js');
const ROUNDS = 5;
const vectorOf = (id: number): number[] => [id, id % 7, id % 13, 1];

describe('vector index crash safety', () => {
  it(`finds every acknowledged vector after ${ROUNDS} SIGKILLs (checkpoints every 25 records)`, async () => {
    const { dir, remove } = await tempDir('svcdb-vcrash-');
    const acknowledged: number[] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const acked = await runUntilKilled(writer, [dir, String(round * 100_000)], 100 + Math.floor(Math.random() * 400));
        acknowledged.push(...acked.map(Number));
        const stack = await openStack(dir);
        try {
          const table = stack.projections.catalog.tableByName('default', 'public', 'vecs')!;
          const index = table.def.indexes.find((i) => i.name === 'vecs_hnsw')!;
          expect(stack.projections.vectors.index(index.id)!.size).toBe(table.stats.rowCount);
          for (const id of acknowledged) {
            const [hit] = await stack.projections.vectors.search(index.id, new Float32Array(vectorOf(id)), 1, 200)!;
            expect(Buffer.from(hit!.pk).equals(Buffer.from(encodeKey([{ name: 'int4' }], [id]))), `row ${id} after round ${round}`).toBe(true);
          }
        } finally {
          await stack.close();
        }
      }
      expect(acknowledged.length).toBeGreaterThan(0);
    } finally {
      await remove();
    }
  }, 120_000);
});
