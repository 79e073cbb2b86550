import type { TableDef } from '../core/catalog.js';
import { assert } from '../core/errors.js';
import { decodeLogRecord, encodeLogRecord } from '../core/log-records.js';
import type { CatalogObject, TableStats } from './catalog-state.js';

/**
 * A stored table definition uses the log's own versioned schema (a put_table op), so the catalog
 * on disk and the catalog facts in the log are one format.
 */
export function encodeTableDef(table: TableDef): Uint8Array {
  return encodeLogRecord({ type: 'txn', txnId: '', tenant: table.tenant, timestampMicros: 0n, ops: [{ kind: 'put_table', table }] });
}

export function decodeTableDef(bytes: Uint8Array): TableDef {
  const op = decodeLogRecord(bytes).ops[0];
  assert(op?.kind === 'put_table', 'stored catalog entry is not a table definition');
  return op.table;
}

export function encodeStats(stats: TableStats): Uint8Array {
  const out = new Uint8Array(24);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(Math.max(0, stats.rowCount)), false);
  view.setBigUint64(8, BigInt(Math.max(0, stats.sizeBytes)), false);
  view.setBigUint64(16, BigInt(Math.max(0, stats.indexSizeBytes)), false);
  return out;
}

export function decodeStats(bytes: Uint8Array | undefined): TableStats {
  if (!bytes || bytes.length < 24) return { rowCount: 0, sizeBytes: 0, indexSizeBytes: 0 };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    rowCount: Number(view.getBigUint64(0, false)),
    sizeBytes: Number(view.getBigUint64(8, false)),
    indexSizeBytes: Number(view.getBigUint64(16, false)),
  };
}

/** A catalog object (view, CDC stream, ...) as stored: JSON, its bigints as text. */
export function encodeObject(object: CatalogObject): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({ ...object, createdSequence: object.createdSequence.toString(), snapshotRows: object.snapshotRows.toString() }),
  );
}

export function decodeObject(bytes: Uint8Array): CatalogObject {
  const raw = JSON.parse(new TextDecoder().decode(bytes)) as Omit<CatalogObject, 'createdSequence' | 'snapshotRows'> & {
    createdSequence: string;
    snapshotRows: string;
  };
  return { ...raw, createdSequence: BigInt(raw.createdSequence), snapshotRows: BigInt(raw.snapshotRows) };
}
