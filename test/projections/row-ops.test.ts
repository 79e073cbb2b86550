import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TxnOp } from '../../core/log-records.js';
import { rowKey } from '../../projections/keys.js';
import { rowChangeOps, rowRecordEffects, type StatsDelta } from '../../projections/row-ops.js';
import type { KvOp } from '../../projections/state-store.js';
import { itemsTable, openStack, rowChange, tempDir, txn, type Stack } from '../helpers/stack.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const shown = (ops: readonly KvOp[]): string[][] => ops.map((op) => [op.type, hex(op.key), op.type === 'put' ? hex(op.value) : '']);

/** rowRecordEffects keys every row change from one shared buffer: the same ops and statistics as one rowKey per change. */
describe('row record effects', () => {
  let stack: Stack;
  let remove: () => Promise<void>;
  const a = itemsTable(1, { name: 'a', scoreIndexId: 7 });
  const b = itemsTable(2, { name: 'b' });

  beforeAll(async () => {
    const dir = await tempDir('svcdb-row-ops-');
    remove = dir.remove;
    stack = await openStack(dir.dir);
    await stack.projections.sequencer.submit(async () => ({
      record: txn([
        { kind: 'put_table', table: a },
        { kind: 'put_table', table: b },
      ]),
      result: null,
    }));
  });
  afterAll(async () => {
    await stack.close();
    await remove();
  });

  it('interleaved tables, updates, deletes and sequences: the ops and per-table deltas of rowChangeOps with rowKey', () => {
    const tableOf = (id: number) => stack.projections.catalog.table(id);
    const ops: TxnOp[] = [
      rowChange(a, 'insert', null, { id: 1n, name: 'x', score: 3 }),
      rowChange(b, 'insert', null, { id: 1n, name: 'y', score: null }),
      { kind: 'sequence', name: 's', lastValue: 5n },
      rowChange(a, 'update', { id: 1n, name: 'x', score: 3 }, { id: 1n, name: 'xx', score: 4 }),
      rowChange(b, 'insert', null, { id: 300n, name: 'z', score: 1 }),
      rowChange(a, 'delete', { id: 2n, name: 'w', score: 9 }, null),
      rowChange(b, 'delete', { id: 1n, name: 'y', score: null }, null),
    ];
    const effects = rowRecordEffects(ops, tableOf)!;
    const expected: KvOp[] = [];
    const deltas = new Map<number, StatsDelta>();
    for (const op of ops) {
      if (op.kind !== 'row') continue;
      if (!deltas.has(op.tableId)) deltas.set(op.tableId, { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 });
      rowChangeOps(tableOf(op.tableId)!, op, expected, deltas.get(op.tableId)!);
    }
    expect(shown(effects.ops)).toEqual(shown(expected));
    expect(effects.ops.filter((op) => op.key[0] === 0x10).map((op) => hex(op.key))).toEqual(
      ops.flatMap((op) => (op.kind === 'row' ? [hex(rowKey(op.tableId, op.key))] : [])),
    );
    expect(effects.deltas).toEqual(deltas);
  });

  it('a catalog op gives null (only the projection applies it); a row of an unknown table before it is refused', () => {
    const tableOf = (id: number) => stack.projections.catalog.table(id);
    const insert = rowChange(a, 'insert', null, { id: 9n, name: 'q', score: 1 });
    expect(rowRecordEffects([insert, { kind: 'put_table', table: itemsTable(3, { name: 'c' }) }], tableOf)).toBeNull();
    const unknown = rowChange(itemsTable(99, { name: 'gone' }), 'insert', null, { id: 1n, name: 'q', score: 1 });
    expect(() => rowRecordEffects([insert, unknown, { kind: 'put_table', table: itemsTable(3, { name: 'c' }) }], tableOf)).toThrow(
      expect.objectContaining({ code: 'TABLE_NOT_FOUND' }),
    );
  });
});
