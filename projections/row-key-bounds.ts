import type { TableId } from '../core/catalog.js';
import { compareKeys } from '../core/key-encoding.js';
import type { TxnOp } from '../core/log-records.js';

/**
 * Per table, a primary key no stored or pending row sorts after (null: the table has no row), kept
 * by the sequencer from the records it appends. A bulk insert whose keys all sort after it knows
 * none of them exists without a read; reading the table's last row in reverse cost a LevelDB
 * iterator per statement (~5% of a 1,000-row VALUES insert). Only a bound: deletes leave it where
 * it was (a key above every row is still above them), and a record that changes the catalog
 * forgets them all, so a dropped or truncated table is read again.
 */
export class RowKeyBounds {
  /** tableId -> bound (null: no rows); a table not in the map is not known. */
  private readonly bounds = new Map<TableId, Uint8Array | null>();

  /** The bound of a table, or undefined when it is not known (then `learn` it from a read). */
  get(tableId: TableId): Uint8Array | null | undefined {
    return this.bounds.get(tableId);
  }

  /** What a reverse read of the table under the write lock found: its last key, or null. */
  learn(tableId: TableId, lastKey: Uint8Array | null): void {
    this.bounds.set(tableId, lastKey);
  }

  /** Raises the bounds past the rows a row-only record puts (inside the write lock, in append order). */
  appended(ops: readonly TxnOp[]): void {
    if (this.bounds.size === 0) return;
    let tableId = -1;
    let known: Uint8Array | null | undefined;
    let bound: Uint8Array | null | undefined;
    // One step past the last op (null) raises the last table's bound in the loop, as a change of
    // table raises the others: nothing follows the loop (docs/decisions.md, "Loops that run long in
    // a function's first call").
    for (let i = 0; i <= ops.length; i++) {
      const op = i < ops.length ? ops[i]! : null;
      if (op !== null && (op.kind !== 'row' || op.after === null)) continue;
      if (op === null || op.tableId !== tableId) {
        this.raise(tableId, known, bound);
        if (op === null) return;
        tableId = op.tableId;
        bound = known = this.bounds.get(tableId);
      }
      if (bound !== undefined && (bound === null || compareKeys(op.key, bound) > 0)) bound = op.key;
    }
  }

  private raise(tableId: TableId, known: Uint8Array | null | undefined, bound: Uint8Array | null | undefined): void {
    // A copy when the key is a view of a larger buffer (a bulk insert's shared chunk, which it would
    // keep alive); a key that is its whole buffer (a single-row insert's) is kept as it is.
    if (bound !== known && bound) this.bounds.set(tableId, bound.byteOffset === 0 && bound.byteLength === bound.buffer.byteLength ? bound : bound.slice());
  }

  /** A record that changes the catalog: every bound is read again when next asked. */
  forget(): void {
    this.bounds.clear();
  }
}
