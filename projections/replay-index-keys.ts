/**
 * Index keys for replay's fast path (replay-decode.ts): the keys of a record's rows encoded into one
 * reused buffer (offsets and lengths), not a new array per key as the catalog's keyOf returns them
 * (catalog-state.ts compileIndex: the same decode and encoding, with a copy at the end).
 */
import type { ColumnId } from '../core/catalog.js';
import { encodeKeyWith } from '../core/key-encoding.js';
import { decodeRowInto } from '../core/row-codec.js';
import type { SqlType, SqlValue } from '../core/values.js';
import type { CompiledIndex, TableEntry } from './catalog-state.js';

/** A row without this image (insert's before, delete's after): no key. */
export const NO_KEY = -1;

/**
 * The index keys of the record being read, in one reused buffer: per row and btree index, the old
 * key then the new one, each an offset and a length in `bytes` (NO_KEY: no key).
 */
export class IndexKeys {
  bytes = new Uint8Array(4096);
  end = 0;
  n = 0;
  at: Int32Array = new Int32Array(256);
  length: Int32Array = new Int32Array(256);

  reset(): void {
    this.end = 0;
    this.n = 0;
  }

  none(): void {
    this.slot(NO_KEY, 0);
  }

  /** The key of `index` for the image payload[from, +length), encoded here (throws on a damaged image). */
  encode(index: CompiledIndex, table: TableEntry, payload: Uint8Array, from: number, length: number): void {
    const plan = planOf(index, table);
    const values = decodeRowInto(payload.subarray(from, from + length), plan.columnIds, plan.missing, plan.scratch);
    const keyLength = encodeKeyWith(plan.types, values, this.take, plan.descending);
    this.slot(this.end - keyLength, keyLength);
  }

  /** The key encodeKeyWith gives (valid only during the call), copied to the end of `bytes`; its length. */
  private readonly take = (scratch: Uint8Array, length: number): number => {
    if (this.end + length > this.bytes.length) {
      const bigger = new Uint8Array(Math.max(this.bytes.length * 2, this.end + length));
      bigger.set(this.bytes.subarray(0, this.end));
      this.bytes = bigger;
    }
    const bytes = this.bytes;
    const end = this.end;
    for (let i = 0; i < length; i++) bytes[end + i] = scratch[i]!;
    this.end = end + length;
    return length;
  };

  private slot(at: number, length: number): void {
    const i = this.n++;
    if (i === this.at.length) {
      this.at = grown(this.at, i * 2);
      this.length = grown(this.length, i * 2);
    }
    this.at[i] = at;
    this.length[i] = length;
  }
}

/** What an index key is made of, as catalog-state.ts's compileIndex derives it (its keyOf returns a copy per key). */
interface KeyPlan {
  readonly columnIds: readonly ColumnId[];
  readonly types: readonly SqlType[];
  readonly missing: readonly SqlValue[];
  readonly descending: readonly boolean[];
  readonly scratch: SqlValue[];
}

const plans = new WeakMap<CompiledIndex, KeyPlan>();

function planOf(index: CompiledIndex, table: TableEntry): KeyPlan {
  let plan = plans.get(index);
  if (plan === undefined) {
    const types: SqlType[] = [];
    const missing: SqlValue[] = [];
    for (const columnId of index.def.columnIds) {
      const column = table.def.columns.find((c) => c.id === columnId);
      // The catalog compiled this index from the same definition: a missing column cannot happen here.
      if (column === undefined) throw new Error(`index ${index.def.name} names unknown column id ${columnId}`);
      types.push(column.type);
      missing.push(column.missingValue);
    }
    const columnIds = index.def.columnIds;
    plan = { columnIds, types, missing, descending: index.def.descending, scratch: new Array<SqlValue>(columnIds.length) };
    plans.set(index, plan);
  }
  return plan;
}

function grown(ints: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(size);
  bigger.set(ints);
  return bigger;
}
