/**
 * Replay workers read row-only records through a fast path (projections/replay-decode.ts) that
 * writes their effects without decoding the record into objects. It must give exactly what the
 * general path (decodeLogRecord + rowRecordEffects) gives: the same packed ops byte for byte, the
 * same statistics, sequences and next event sequence, and it must stop at the same record when a
 * payload is damaged, names an unknown table or changes the catalog.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableDef } from '../../core/catalog.js';
import { encodeLogRecord, LOG_RECORD_SCHEMA_VERSION, type TxnOp, type TxnRecord } from '../../core/log-records.js';
import { encodeTableDef } from '../../projections/catalog-codec.js';
import { CatalogState } from '../../projections/catalog-state.js';
import { packPayloads, WorkerCatalog, type PreparedChunk } from '../../projections/replay-chunk.js';
import { fastRowRecord, type EffectsSink } from '../../projections/replay-decode.js';
import type { LogEntry } from '../../log/index.js';
import type { Lsn } from '../../core/units.js';
import { itemsTable, rowChange, type ItemRow } from '../helpers/stack.js';

/** Table 1: an index on score; 2: none; 3: an index on score and an hnsw index (vector flag). */
function tables(): TableDef[] {
  const three = itemsTable(3, { name: 't3', scoreIndexId: 31 });
  const hnsw = { id: 32, name: 't3_hnsw', kind: 'hnsw' as const, columnIds: [3], descending: [false], unique: false, primary: false, options: {} };
  return [itemsTable(1, { name: 't1', scoreIndexId: 11 }), itemsTable(2, { name: 't2' }), { ...three, indexes: [...three.indexes, hnsw] }];
}

const rowArb = fc.record({
  table: fc.integer({ min: 1, max: 4 }), // 4: unknown
  op: fc.constantFrom('insert', 'update', 'delete', 'update-same-score'),
  id: fc.bigInt({ min: -5n, max: 2n ** 40n }),
  name: fc.option(fc.string({ maxLength: 40 }), { nil: null }),
  score: fc.option(fc.integer({ min: -1000, max: 1000 }), { nil: null }),
  oldScore: fc.option(fc.integer({ min: -1000, max: 1000 }), { nil: null }),
});
const recordArb = fc.record({
  rows: fc.array(rowArb, { minLength: 0, maxLength: 6 }),
  sequence: fc.option(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { nil: null, freq: 8 }),
  firstSequence: fc.option(fc.bigInt({ min: 0n, max: 2n ** 62n }), { nil: undefined }),
  catalog: fc.boolean().map((b) => b && Math.random() < 0.1),
});
type RecordSpec = typeof recordArb extends fc.Arbitrary<infer T> ? T : never;

function recordOf(spec: RecordSpec, defs: readonly TableDef[]): TxnRecord {
  const ops: TxnOp[] = [];
  for (const row of spec.rows) {
    const def = defs[row.table - 1] ?? { ...defs[0]!, id: row.table };
    const before: ItemRow = { id: row.id, name: 'old', score: row.op === 'update-same-score' ? row.score : row.oldScore };
    const after: ItemRow = { id: row.id, name: row.name, score: row.score };
    if (row.op === 'insert') ops.push(rowChange(def, 'insert', null, after));
    else if (row.op === 'delete') ops.push(rowChange(def, 'delete', before, null));
    else ops.push(rowChange(def, 'update', before, after));
  }
  if (spec.sequence !== null) ops.push({ kind: 'sequence', name: 'serial_seq', lastValue: spec.sequence });
  if (spec.catalog) ops.push({ kind: 'drop_table', tableId: 2 });
  const record: TxnRecord = { type: 'txn', txnId: `t-${ops.length}`, tenant: 'default', timestampMicros: 1_700_000_000_000_000n, ops };
  return spec.firstSequence === undefined ? record : { ...record, firstSequence: spec.firstSequence };
}

function prepareBoth(payloads: readonly Uint8Array[], firstLsn: number): { fast: PreparedChunk; general: PreparedChunk } {
  const defs = tables().map(encodeTableDef);
  const entries: LogEntry[] = payloads.map((payload, i) => ({ lsn: (firstLsn + i) as Lsn, payload }));
  const run = (fastPath: boolean): PreparedChunk => {
    const catalog = new WorkerCatalog(fastPath);
    catalog.reset(defs);
    return catalog.prepare(packPayloads(entries), firstLsn).chunk;
  };
  return { fast: run(true), general: run(false) };
}

function same(fast: PreparedChunk, general: PreparedChunk): void {
  expect(fast.count).toBe(general.count);
  expect(fast.rows).toBe(general.rows);
  expect(fast.batch.count).toBe(general.batch.count);
  expect(Buffer.from(fast.batch.rep.subarray(0, fast.batch.end)).equals(Buffer.from(general.batch.rep.subarray(0, general.batch.end)))).toBe(true);
  expect([...fast.vectorFlags]).toEqual([...general.vectorFlags]);
  expect([...fast.deltas]).toEqual([...general.deltas]);
  expect(fast.sequences).toEqual(general.sequences);
  if (general.count > 0) expect(fast.nextSequence).toBe(general.nextSequence);
}

describe('replay fast path', () => {
  it('gives the general path’s effects byte for byte, and stops at the same record', () => {
    fc.assert(
      fc.property(fc.array(recordArb, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 2 ** 40 }), (specs, firstLsn) => {
        const payloads = specs.map((spec) => encodeLogRecord(recordOf(spec, tables())));
        const { fast, general } = prepareBoth(payloads, firstLsn);
        same(fast, general);
      }),
      { numRuns: 300 },
    );
  });

  it('takes row-only records itself (the general path is not what the equivalence tests exercise alone)', () => {
    const defs = tables();
    const payloads = [1, 2, 3].map((id) =>
      encodeLogRecord(
        recordOf(
          { rows: [{ table: 3, op: 'insert', id: BigInt(id), name: 'x', score: id, oldScore: null }], sequence: null, firstSequence: 7n, catalog: false },
          defs,
        ),
      ),
    );
    const { fast, general } = prepareBoth(payloads, 10);
    same(fast, general);
    expect(fast.count).toBe(3);
    expect([...fast.vectorFlags]).toEqual([1, 1, 1]);
    expect(fast.nextSequence).toBe(8n);
  });

  it('reads the payloads encodeLogRecord writes today (its schema version), not only older ones', () => {
    const defs = tables();
    const catalog = new CatalogState();
    for (const def of defs) catalog.putTable(def);
    const payload = encodeLogRecord(
      recordOf({ rows: [{ table: 1, op: 'insert', id: 1n, name: 'x', score: 1, oldScore: null }], sequence: null, firstSequence: 7n, catalog: false }, defs),
    );
    expect(payload[0]).toBe(LOG_RECORD_SCHEMA_VERSION);
    let keyOps = 0;
    const sink: EffectsSink = { keyOp: () => void keyOps++, deltaOf: () => ({ rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 }) };
    const fast = fastRowRecord(payload, (id) => catalog.table(id), sink);
    expect(fast).not.toBeNull();
    expect(fast!.rows).toBe(1);
    expect(keyOps).toBeGreaterThan(0);
  });

  it('damaged payloads: truncated, extended or with a byte changed, the two paths agree', () => {
    fc.assert(
      fc.property(
        fc.array(recordArb, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.constantFrom('truncate', 'extend', 'flip'),
        fc.integer({ min: 1, max: 255 }),
        (specs, at, damage, xor) => {
          const payloads = specs.map((spec) => encodeLogRecord(recordOf(spec, tables())));
          const victim = at % payloads.length;
          const bytes = Uint8Array.from(payloads[victim]!);
          const where = at % bytes.length;
          if (damage === 'truncate') payloads[victim] = bytes.subarray(0, where);
          else if (damage === 'extend') payloads[victim] = Uint8Array.from([...bytes, xor]);
          else {
            bytes[where] = bytes[where]! ^ xor;
            payloads[victim] = bytes;
          }
          const { fast, general } = prepareBoth(payloads, 5);
          same(fast, general);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
