import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { runUntilKilled } from '../helpers/kill.js';
import { openStack, tempDir } from '../helpers/stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writer = path.join(root, 'dist/test/fixtures/insert-crash-writer.js');
const ROUNDS = 8;
// Each round is killed only after this many acknowledged inserts (and its random delay), so a
// loaded machine cannot turn the test into kills of an idle writer.
const ACKS_PER_ROUND_MIN = 20;

// Single-row INSERTs answered by the prepared INSERT (query/fast-insert.ts) and by JSON rows must
// be durable when answered: after any SIGKILL every acknowledged row is there, whole.
describe('single-row inserts across SIGKILL', () => {
  it(`keeps every acknowledged insert (prepared SQL and JSON rows) across ${ROUNDS} kills`, async () => {
    const { dir, remove } = await tempDir('svcdb-insert-crash-');
    const acknowledged: bigint[] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const acked = await runUntilKilled(writer, [dir, String(round * 1_000_000)], 100 + Math.floor(Math.random() * 400), ACKS_PER_ROUND_MIN);
        acknowledged.push(...acked.map(BigInt));
        const stack = await openStack(dir);
        try {
          const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
          const result = await engine.execute('SELECT id, name, n, note FROM ins', { timeoutMs: 30_000, maxRows: 1_000_000, tenant: 'default' });
          const stored = new Map(result.rows.map((r) => [String(r.id), r]));
          for (const id of acknowledged) {
            expect(stored.get(String(id)), `acknowledged row ${id} is missing after round ${round}`).toEqual({
              id: Number(id),
              name: `row-${id}`,
              n: Number(id % 1000n),
              note: 'd',
            });
          }
          expect(stack.projections.catalog.tableByName('default', 'public', 'ins')!.stats.rowCount).toBe(result.rows.length);
        } finally {
          await stack.close();
        }
      }
      expect(acknowledged.length).toBeGreaterThanOrEqual(ROUNDS * ACKS_PER_ROUND_MIN);
    } finally {
      await remove();
    }
  }, 240_000);
});
