import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { runUntilKilled } from '../helpers/kill.js';
import { openStack, tempDir } from '../helpers/stack.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writer = path.join(root, 'dist/test/fixtures/bulk-crash-writer.js');
const ROUNDS = 5;

describe('bulk insert crash safety', () => {
  it(`keeps every acknowledged bulk request and no partial one across ${ROUNDS} SIGKILLs`, async () => {
    const { dir, remove } = await tempDir('svcdb-bulk-crash-');
    const acknowledged: string[] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        acknowledged.push(...(await runUntilKilled(writer, [dir, String(round * 10_000_000)], 1500 + Math.floor(Math.random() * 2000))));
        // Read while the projections catch up with the log, as the server does (it listens first): a
        // write answered once durable may not have been applied before the SIGKILL, and the read must
        // wait for it at the read barrier, not answer from the store as it is.
        const stack = await openStack(dir, { start: false });
        try {
          expect(stack.projections.readBarrier.acknowledged).toBeGreaterThanOrEqual(stack.log.durableLsn);
          const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
          const catchingUp = stack.projections.start();
          const result = await engine.execute('SELECT name, count(*) AS n, min(id) AS lo, max(id) AS hi FROM bulk GROUP BY name', {
            params: [],
            timeoutMs: 60_000,
            maxRows: 100_000,
            tenant: 'default',
          });
          await catchingUp;
          const groups = new Map(result.rows.map((r) => [r.name as string, r]));
          for (const ack of acknowledged) expect(groups.has(ack), `acknowledged request ${ack} is missing after round ${round}`).toBe(true);
          for (const [name, row] of groups) {
            const [first, count] = name.split(':').map(Number) as [number, number];
            expect(Number(row.n), `request ${name} is partial`).toBe(count);
            expect([Number(row.lo), Number(row.hi)]).toEqual([first, first + count - 1]);
          }
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
