import type { IndexId, TableId } from '../../core/catalog.js';
import { compareKeys } from '../../core/key-encoding.js';
import type { WriteView } from '../../projections/index.js';
import { keyText } from '../../core/key-text.js';

// What TableWriter reads ahead for many rows at once (query/dml/writer.ts): whole-statement reads
// that stand for a read per row, kept apart from the per-row checks.

/**
 * One sorted pass over the index entries under the wanted keys' common prefix, matching
 * entries to wanted keys (index entry = index key + pk; encoded keys are prefix-free). Stops
 * after a bounded number of entries; returns the keys it could not settle, for point probes.
 */
export async function scanIndex(
  view: WriteView,
  indexId: IndexId,
  wanted: readonly Uint8Array[],
  found: Map<string, Uint8Array[]>,
): Promise<[string, Uint8Array][]> {
  if (wanted.length === 0) return [];
  const first = wanted[0]!;
  const last = wanted[wanted.length - 1]!;
  let common = 0;
  while (common < first.length && common < last.length && first[common] === last[common]) common += 1;
  const prefix = first.subarray(0, common);
  const budget = wanted.length * 8 + 4096;
  let visited = 0;
  let i = 0;
  const hold = (at: number): Uint8Array[] => {
    const k = keyText(wanted[at]!);
    let pks = found.get(k);
    if (!pks) found.set(k, (pks = []));
    return pks;
  };
  const startsWith = (entry: Uint8Array, ik: Uint8Array): boolean => {
    if (entry.length < ik.length) return false;
    for (let j = common; j < ik.length; j++) if (entry[j] !== ik[j]) return false;
    return true;
  };
  scan: for await (const batch of view.indexEntries(indexId, prefix)) {
    for (const rest of batch) {
      const entry = new Uint8Array(common + rest.length);
      entry.set(prefix, 0);
      entry.set(rest, common);
      while (i < wanted.length && !startsWith(entry, wanted[i]!) && compareKeys(wanted[i]!, entry) < 0) hold(i++);
      if (i >= wanted.length) break scan;
      if (startsWith(entry, wanted[i]!)) hold(i).push(entry.subarray(wanted[i]!.length));
    }
    visited += batch.length;
    if (visited > budget) {
      found.delete(keyText(wanted[i]!)); // possibly seen only in part
      return wanted.slice(i).map((ik) => [keyText(ik), ik]);
    }
  }
  while (i < wanted.length) hold(i++);
  return [];
}

/**
 * True when every key sorts after the last key of the table as the view sees it (stored and
 * pending records, a transaction's own changes): then none of them exists, and one read of the
 * last row stands for a lookup per key (a bulk load of ascending ids: 10,000 LevelDB reads).
 * The sequencer's view keeps a bound above the last key instead of reading it every time.
 */
export async function allAfterLastKey(view: WriteView, tableId: TableId, keys: readonly Uint8Array[], sorted = false): Promise<boolean> {
  // Keys known to ascend (`sorted`: checked by the caller) start with the least one.
  let least = keys[0]!;
  if (!sorted) for (let i = 1; i < keys.length; i++) if (compareKeys(keys[i]!, least) < 0) least = keys[i]!;
  if (view.rowKeyBound) {
    const bound = await view.rowKeyBound(tableId);
    return bound === null || compareKeys(least, bound) > 0;
  }
  for await (const batch of view.rows(tableId, { reverse: true })) {
    const last = batch[0];
    if (last !== undefined) return compareKeys(least, last[0]) > 0;
  }
  return true;
}

/** True when every key sorts after the one before it (so no two are equal). */
export function ascending(keys: readonly Uint8Array[]): boolean {
  for (let i = 1; i < keys.length; i++) if (compareKeys(keys[i - 1]!, keys[i]!) >= 0) return false;
  return true;
}
