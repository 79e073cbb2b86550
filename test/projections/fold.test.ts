import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { encodeKey } from '../../core/key-encoding.js';
import { decodeLogRecord, encodeLogRecord, type TxnOp, type TxnRecord } from '../../core/log-records.js';
import { silentLogger } from '../../core/logger.js';
import { decodeRow } from '../../core/row-codec.js';
import type { Lsn } from '../../core/units.js';
import { keys, openStateStore, prepareDataDir, rebuildProjections, TablesProjection, type StateStore } from '../../projections/index.js';
import { dumpStore, itemsTable, openLogAt, openStack, rowChange, tempDir, txn, type ItemRow } from '../helpers/stack.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A random workload: each step is interpreted against a model so every record is valid. */
const stepArb = fc.record({
  kind: fc.constantFrom('create', 'insert', 'insert', 'insert', 'update', 'delete', 'index', 'unindex', 'truncate', 'drop', 'sequence'),
  table: fc.integer({ min: 1, max: 3 }),
  id: fc.integer({ min: 0, max: 40 }),
  score: fc.option(fc.integer({ min: -5, max: 5 }), { nil: null }),
  rows: fc.integer({ min: 1, max: 8 }),
});
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

function recordsFor(steps: readonly Step[]): TxnRecord[] {
  const tables = new Map<number, { def: TableDef; rows: Map<bigint, ItemRow> }>();
  const records: TxnRecord[] = [];
  let nextIndexId = 1000;
  for (const step of steps) {
    const state = tables.get(step.table);
    const ops: TxnOp[] = [];
    if (step.kind === 'create' || !state) {
      if (state) continue;
      const def = itemsTable(step.table, { name: `t${step.table}` });
      tables.set(step.table, { def, rows: new Map() });
      records.push(txn([{ kind: 'put_table', table: def }]));
      continue;
    }
    const { def, rows } = state;
    switch (step.kind) {
      case 'insert':
        for (let i = 0; i < step.rows; i++) {
          const id = BigInt(step.id * 10 + i);
          const row = { id, name: `n${id}`, score: step.score };
          ops.push(rowChange(def, rows.has(id) ? 'update' : 'insert', rows.get(id) ?? null, row));
          rows.set(id, row);
        }
        break;
      case 'update':
      case 'delete': {
        const victim = [...rows.values()][step.id % Math.max(1, rows.size)];
        if (!victim) continue;
        const after = step.kind === 'update' ? { ...victim, score: step.score, name: null } : null;
        ops.push(rowChange(def, step.kind, victim, after));
        if (after) rows.set(victim.id, after);
        else rows.delete(victim.id);
        break;
      }
      case 'index':
      case 'unindex': {
        const next =
          step.kind === 'index'
            ? itemsTable(step.table, { name: `t${step.table}`, scoreIndexId: nextIndexId++ })
            : itemsTable(step.table, { name: `t${step.table}` });
        state.def = next;
        ops.push({ kind: 'put_table', table: next });
        break;
      }
      case 'truncate':
        rows.clear();
        ops.push({ kind: 'truncate', tableIds: [step.table] });
        break;
      case 'drop':
        tables.delete(step.table);
        ops.push({ kind: 'drop_table', tableId: step.table });
        break;
      case 'sequence':
        ops.push({ kind: 'sequence', name: `s${step.table}`, lastValue: BigInt(step.id) });
        break;
    }
    if (ops.length > 0) records.push(txn(ops));
  }
  return records;
}

/** The expected rows and index entries: an independent fold over the decoded records. */
function fold(records: readonly TxnRecord[]): { rows: Map<string, string>; index: Set<string>; tables: Set<number> } {
  const tables = new Map<number, TableDef>();
  const rows = new Map<number, Map<string, Uint8Array>>();
  for (const record of records.map((r) => decodeLogRecord(encodeLogRecord(r)))) {
    for (const op of record.ops) {
      if (op.kind === 'put_table') {
        tables.set(op.table.id, op.table);
        if (!rows.has(op.table.id)) rows.set(op.table.id, new Map());
      } else if (op.kind === 'drop_table') {
        tables.delete(op.tableId);
        rows.delete(op.tableId);
      } else if (op.kind === 'truncate') {
        for (const id of op.tableIds) rows.set(id, new Map());
      } else if (op.kind === 'row') {
        const hex = Buffer.from(op.key).toString('hex');
        if (op.after) rows.get(op.tableId)!.set(hex, op.after);
        else rows.get(op.tableId)!.delete(hex);
      }
    }
  }
  const outRows = new Map<string, string>();
  const index = new Set<string>();
  for (const [tableId, tableRows] of rows) {
    const def = tables.get(tableId)!;
    for (const [pkHex, image] of tableRows) {
      const pk = Buffer.from(pkHex, 'hex');
      outRows.set(Buffer.from(keys.rowKey(tableId, pk)).toString('hex'), Buffer.from(image).toString('hex'));
      for (const idx of def.indexes.filter((i) => !i.primary)) {
        const values = decodeRow(image);
        const types = idx.columnIds.map((id) => def.columns.find((c) => c.id === id)!.type);
        const key = encodeKey(
          types,
          idx.columnIds.map((id) => (values.get(id) ?? null) as never),
        );
        index.add(Buffer.from(keys.indexEntryKey(idx.id, key, pk)).toString('hex'));
      }
    }
  }
  return { rows: outRows, index, tables: new Set(tables.keys()) };
}

async function actual(store: StateStore): Promise<{ rows: Map<string, string>; index: Set<string>; tables: Set<number> }> {
  const dump = await dumpStore(store);
  const rows = new Map<string, string>();
  const index = new Set<string>();
  const tables = new Set<number>();
  for (const [key, value] of dump) {
    const space = parseInt(key.slice(0, 2), 16);
    if (space === keys.KeySpace.Row) rows.set(key, value);
    if (space === keys.KeySpace.IndexEntry) index.add(key);
    if (space === keys.KeySpace.Table) tables.add(parseInt(key.slice(2, 10), 16));
  }
  return { rows, index, tables };
}

describe('projection state equals a fold over the log', () => {
  it('at any cut point, and after catching up from it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.integer({ min: 256, max: 64 * 1024 }),
        async (steps, cutSeed, batchBytes) => {
          const records = recordsFor(steps);
          fc.pre(records.length > 0);
          const { dir, remove } = await tempDir();
          try {
            const layout = await prepareDataDir(dir, { create: true });
            const log = await openLogAt(layout.logDir, { segmentSizeBytesMax: 64 * 1024 });
            for (const record of records) await log.append(encodeLogRecord(record)).durable;

            // Apply only up to the cut, then stop as a crash would.
            const cut = (cutSeed % records.length) + 1;
            let store = await openStateStore(layout.stateDir);
            const projection = await TablesProjection.load(store, silentLogger);
            for await (const batch of log.read(1 as Lsn, { toLsn: cut as Lsn, batchBytesMax: batchBytes })) await projection.applyBatch(batch);
            expect(projection.offset).toBe(cut);
            expect(await actual(store)).toEqual(fold(records.slice(0, cut)));
            await store.close();
            await log.close();

            // Restart: the projection catches up from its durable offset.
            const stack = await openStack(dir);
            try {
              expect(stack.projections.tables.offset).toBe(records.length);
              expect(await actual(stack.store)).toEqual(fold(records));
            } finally {
              await stack.close();
            }
            store = undefined as never;
          } finally {
            await remove();
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('svcdb replay rebuilds projections identical key for key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 60 }), async (steps) => {
        const records = recordsFor(steps);
        const { dir, remove } = await tempDir();
        try {
          const stack = await openStack(dir);
          for (const record of records) await stack.projections.sequencer.submit(async () => ({ record, result: null }));
          await stack.projections.stop();
          // Sinks' own state (a CDC position) is not derived from the log: replay must keep it.
          await stack.store.write([{ type: 'put', key: keys.sinkStateKey('cdc-offset:s1'), value: Uint8Array.of(1, 2, 3) }]);
          const incremental = await dumpStore(stack.store);
          let progressCalls = 0;
          const { records: replayed } = await rebuildProjections({
            log: stack.log,
            layout: stack.layout,
            liveStore: stack.store,
            batchBytesMax: 4096,
            logger: silentLogger,
            onProgress: () => progressCalls++,
          });
          await stack.log.close();
          expect(replayed).toBe(records.length);
          expect(progressCalls > 0 || records.length === 0).toBe(true);
          const rebuilt = await openStateStore(stack.layout.stateDir);
          try {
            expect(await dumpStore(rebuilt)).toEqual(incremental);
          } finally {
            await rebuilt.close();
          }
        } finally {
          await remove();
        }
      }),
      { numRuns: 60 },
    );
  });
});
