import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { rebuildProjections } from '../../projections/index.js';
import { itemsTable, openStack, rowChange, tempDir, txn } from '../helpers/stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('log retention driven by consumer offsets', () => {
  it('is off by default: every segment stays', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024 });
    cleanups.push(() => stack.close());
    await writeRows(stack, 300);
    expect(stack.log.segments().length).toBeGreaterThan(2);
    expect(stack.log.firstLsn).toBe(1);
  });

  it('when enabled, removes only segments every consumer has applied, and replay then refuses clearly', async () => {
    const { dir, remove } = await tempDir();
    cleanups.push(remove);
    const stack = await openStack(dir, { segmentSizeBytesMax: 64 * 1024, retentionEnabled: true });
    cleanups.push(() => stack.close());
    await writeRows(stack, 300);
    await expect.poll(() => stack.log.firstLsn).toBeGreaterThan(1);
    expect(stack.log.firstLsn).toBeLessThanOrEqual(stack.projections.tables.offset + 1);
    expect(stack.projections.catalog.table(1)!.stats.rowCount).toBe(300);
    await stack.projections.stop();
    await expect(
      rebuildProjections({
        log: stack.log,
        layout: stack.layout,
        liveStore: stack.store,
        batchBytesMax: 65536,
        logger: silentLogger,
        onProgress: () => {},
      }),
    ).rejects.toThrow(/retained away/);
  });
});

async function writeRows(stack: Awaited<ReturnType<typeof openStack>>, count: number): Promise<void> {
  const table = itemsTable(1);
  await stack.projections.sequencer.submit(async () => ({ record: txn([{ kind: 'put_table', table }]), result: null }));
  for (let i = 0; i < count; i++) {
    const change = rowChange(table, 'insert', null, { id: BigInt(i), name: 'y'.repeat(400), score: i });
    await stack.projections.sequencer.submit(async () => ({ record: txn([change]), result: null }));
  }
}
