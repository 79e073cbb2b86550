/**
 * Projections.stop() lets the projections apply what was acknowledged for up to stopDrainMsMax
 * (STOP_DRAIN_MS_DEFAULT), then stops where they are: a vector graph far behind after a bulk upsert
 * cannot hold a shutdown past its limit. What it left is applied by the next start, before that
 * start resolves (as after a crash): nothing acknowledged is lost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from '../../core/key-encoding.js';
import { silentLogger } from '../../core/logger.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

const DIMS = 64;
const ROWS_PER_STATEMENT = 200;
const int4 = { name: 'int4' } as const;
const pkOf = (id: number): string => Buffer.from(encodeKey([int4], [id])).toString('hex');
/** A vector of its own for every id (no two rows equally near any of them). */
const vectorOf = (id: number): number[] => Array.from({ length: DIMS }, (_v, d) => Math.sin(id * 0.37 + d * 1.91) * 10);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(dir: string, stopDrainMsMax?: number) {
  const stack = await openStack(dir, { ...(stopDrainMsMax === undefined ? {} : { stopDrainMsMax }), readBatchBytesMax: 16 * 1024 });
  const engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
  const q = (sql: string) => engine.execute(sql, { params: [], timeoutMs: 60_000, maxRows: 10_000, tenant: 'default' });
  return { stack, q };
}

async function nearest(stack: Stack, id: number): Promise<string | undefined> {
  await stack.projections.readBarrier.wait();
  const table = stack.projections.catalog.tableByName('default', 'public', 'items')!;
  const index = table.def.indexes.find((i) => i.name === 'items_hnsw')!;
  const hits = (await stack.projections.vectors.search(index.id, new Float32Array(vectorOf(id)), 1, 200)) ?? [];
  return hits[0] === undefined ? undefined : Buffer.from(hits[0].pk).toString('hex');
}

describe('Projections.stop() and a vector graph behind', () => {
  it('stops after the batch in hand once stopDrainMsMax has passed, and the next start applies the rest', async () => {
    const { dir, remove } = await tempDir('svcdb-stop-drain-');
    cleanups.push(remove);
    const first = await open(dir, 0);
    await first.q(`CREATE TABLE items (id INT PRIMARY KEY, embedding VECTOR(${DIMS}))`);
    await first.q('CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 200)');
    // Acknowledged inserts until the vector graph is several records behind the log (each record
    // bigger than a read batch: the loop takes one at a time), however fast this machine is.
    let next = 1;
    const { projections, log } = first.stack;
    for (let statements = 0; statements < 200 && log.durableLsn - projections.applied.lsn < 4; statements++) {
      const values = Array.from({ length: ROWS_PER_STATEMENT }, () => {
        const id = next++;
        return `(${id}, '[${vectorOf(id).join(',')}]')`;
      });
      await first.q(`INSERT INTO items VALUES ${values.join(', ')}`);
    }
    const last = next - 1;
    expect(log.durableLsn - projections.applied.lsn).toBeGreaterThanOrEqual(4);
    await first.stack.close();
    // Stopped short: the checkpoint holds less than the log.
    expect(projections.vectors.durableOffset).toBeLessThan(log.durableLsn);

    const second = await open(dir);
    cleanups.push(() => second.stack.close());
    // start() resolved once caught up: the last row acknowledged before the stop is found.
    expect(second.stack.projections.applied.lsn).toBeGreaterThanOrEqual(log.durableLsn);
    expect(await nearest(second.stack, last)).toBe(pkOf(last));
    expect(await nearest(second.stack, 1)).toBe(pkOf(1));
  });

  it('with time to drain, stops with every acknowledged write applied and checkpointed', async () => {
    const { dir, remove } = await tempDir('svcdb-stop-drain-');
    cleanups.push(remove);
    const db = await open(dir);
    await db.q(`CREATE TABLE items (id INT PRIMARY KEY, embedding VECTOR(${DIMS}))`);
    await db.q('CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 200)');
    for (let s = 0; s < 4; s++) {
      const ids = Array.from({ length: ROWS_PER_STATEMENT }, (_v, i) => s * ROWS_PER_STATEMENT + i + 1);
      await db.q(`INSERT INTO items VALUES ${ids.map((id) => `(${id}, '[${vectorOf(id).join(',')}]')`).join(', ')}`);
    }
    const { projections, log } = db.stack;
    await db.stack.close();
    expect(projections.vectors.durableOffset).toBe(log.durableLsn);
  });
});
