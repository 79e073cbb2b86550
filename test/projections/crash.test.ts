import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeRow } from '../../core/row-codec.js';
import { keys } from '../../projections/index.js';
import { runUntilKilled } from '../helpers/kill.js';
import { itemKey, openStack, tempDir } from '../helpers/stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writer = path.join(root, 'dist/test/fixtures/crash-writer.js');
const ROUNDS = 20;

/** Runs the writer until it is ready, lets it write for a random while, then SIGKILLs it. */
async function runAndKill(dataDir: string, firstId: bigint, writeMs: number): Promise<bigint[][]> {
  const acked = await runUntilKilled(writer, [dataDir, String(firstId)], writeMs);
  return acked.map((ids) => ids.split(',').map(BigInt));
}

describe('crash safety', () => {
  it(`keeps every acknowledged write and nothing partial across ${ROUNDS} SIGKILLs`, async () => {
    const { dir, remove } = await tempDir('svcdb-crash-');
    const acknowledged: bigint[][] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const firstId = BigInt(round) * 1_000_000n;
        acknowledged.push(...(await runAndKill(dir, firstId, 50 + Math.floor(Math.random() * 400))));

        const stack = await openStack(dir);
        try {
          for (const group of acknowledged) {
            for (const id of group) {
              const image = await stack.store.get(keys.rowKey(1, itemKey(id)));
              expect(image, `acknowledged row ${id} is missing after round ${round}`).toBeDefined();
              expect(decodeRow(image!).get(1)).toBe(id);
            }
          }
          // Nothing partial: every multi-row transaction is all there or not at all, and the
          // statistics agree with the rows actually stored.
          const present = new Set<bigint>();
          const groups = new Set<string>();
          for await (const batch of stack.store.entries(keys.idRange(keys.KeySpace.Row, 1))) {
            for (const [, value] of batch) {
              const row = decodeRow(value);
              present.add(row.get(1) as bigint);
              groups.add((row.get(2) as string).split(':').slice(0, 2).join(':'));
            }
          }
          for (const group of groups) {
            const [first, size] = group.split(':').map(BigInt) as [bigint, bigint];
            for (let id = first; id < first + size; id++) expect(present.has(id), `transaction ${group} is partial`).toBe(true);
          }
          expect(stack.projections.catalog.table(1)!.stats.rowCount).toBe(present.size);
          let indexEntries = 0;
          for await (const batch of stack.store.entries(keys.idRange(keys.KeySpace.IndexEntry, 5))) indexEntries += batch.length;
          expect(indexEntries).toBe(present.size);
        } finally {
          await stack.close();
        }
      }
      expect(acknowledged.length).toBeGreaterThan(ROUNDS);
    } finally {
      await remove();
    }
  }, 240_000);
});
