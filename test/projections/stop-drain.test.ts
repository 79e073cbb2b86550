/**
 * Projections.stop() lets the projections apply what was acknowledged for up to stopDrainMsMax
 * (STOP_DRAIN_MS_DEFAULT), then stops them at a record boundary, with the hnsw worker at most about
 * vectorSyncRowsMax inserts behind: a vector graph far behind after a bulk upsert does not hold a
 * shutdown for its whole backlog. What it left is applied by the next start, before that start
 * resolves (as after a crash): nothing acknowledged is lost.
 *
 * The backlog is made the same way on any machine: the rows are acknowledged while the projections
 * are not running (open without start), then start() is called and stop() follows at once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeKey } from '../../core/key-encoding.js';
import { silentLogger } from '../../core/logger.js';
import { PROJECTION_LIMITS } from '../../projections/limits.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

const DIMS = 32;
const ROWS_PER_STATEMENT = 500;
const int4 = { name: 'int4' } as const;
const pkOf = (id: number): string => Buffer.from(encodeKey([int4], [id])).toString('hex');
/** A vector of its own for every id (no two rows equally near any of them). */
const vectorOf = (id: number): number[] => Array.from({ length: DIMS }, (_v, d) => Math.sin(id * 0.37 + d * 1.91) * 10);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function open(dir: string, options: { start?: boolean; stopDrainMsMax?: number } = {}) {
  // The server's read batch (SVC_LOG_READ_BATCH_BYTES_MAX's default): the whole backlog comes in one.
  // Segments big enough for it all (a read batch ends at a segment's end).
  const stack = await openStack(dir, { ...options, readBatchBytesMax: 4 * 1024 * 1024, segmentSizeBytesMax: 64 * 1024 * 1024 });
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

/** A data dir whose log holds `rows` vector rows (in statements of ROWS_PER_STATEMENT) that no projection applied yet. */
async function backlog(rows: number, stopDrainMsMax?: number) {
  const { dir, remove } = await tempDir('svcdb-stop-drain-');
  cleanups.push(remove);
  const first = await open(dir);
  await first.q(`CREATE TABLE items (id INT PRIMARY KEY, embedding VECTOR(${DIMS}))`);
  await first.q('CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_l2_ops) WITH (m = 16, ef_construction = 100)');
  await first.stack.close();
  const db = await open(dir, { start: false, ...(stopDrainMsMax === undefined ? {} : { stopDrainMsMax }) });
  for (let from = 1; from <= rows; from += ROWS_PER_STATEMENT) {
    const ids = Array.from({ length: ROWS_PER_STATEMENT }, (_v, i) => from + i);
    await db.q(`INSERT INTO items VALUES ${ids.map((id) => `(${id}, '[${vectorOf(id).join(',')}]')`).join(', ')}`);
  }
  return { dir, db };
}

describe('Projections.stop() and a vector graph behind', () => {
  it('stops at a record boundary once stopDrainMsMax has passed, and the next start applies the rest', async () => {
    // Several sync chunks' worth of inserts: the stop ends after the first.
    const rows = 5 * PROJECTION_LIMITS.vectorSyncRowsMax;
    const { dir, db } = await backlog(rows, 0);
    const { projections, log } = db.stack;
    const head = log.durableLsn;
    void projections.start();
    await db.stack.close();
    // Stopped short: the vector checkpoint holds some of the backlog, not all of it.
    expect(projections.vectors.durableOffset).toBeLessThan(head);

    const again = await open(dir);
    cleanups.push(() => again.stack.close());
    // start() resolved once caught up: the last row acknowledged before the stop is found, and the first.
    expect(again.stack.projections.applied.lsn).toBeGreaterThanOrEqual(head);
    expect(await nearest(again.stack, rows)).toBe(pkOf(rows));
    expect(await nearest(again.stack, 1)).toBe(pkOf(1));
  });

  it('with time to drain (the default), stops with every acknowledged write applied and checkpointed', async () => {
    // More than one sync chunk, as above, but seconds within the default's reach.
    const { db } = await backlog(3 * PROJECTION_LIMITS.vectorSyncRowsMax);
    const { projections, log } = db.stack;
    const head = log.durableLsn;
    void projections.start();
    expect(projections.applied.lsn).toBeLessThan(head);
    await db.stack.close();
    expect(projections.vectors.durableOffset).toBe(head);
  });
});
