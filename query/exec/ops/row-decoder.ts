import type { ColumnId } from '../../../core/catalog.js';
import { decodeRowInto } from '../../../core/row-codec.js';
import type { SqlValue } from '../../../core/values.js';
import type { QValue } from '../../types/contract.js';
import type { ScanNode } from '../../plan/nodes.js';
import type { Row } from '../context.js';

interface DecodeLayout {
  readonly ids: readonly ColumnId[];
  readonly missing: readonly SqlValue[];
}

/**
 * Per scan node (plans are immutable and cached), the column ids to decode: the same array on
 * every execution, so decodeRowInto's layout of it (cached by array identity) is built once per
 * plan, not once per statement. Index 0: the columns the plan reads; 1: all columns.
 */
const layouts = new WeakMap<ScanNode, [DecodeLayout | undefined, DecodeLayout | undefined]>();

function layoutOf(node: ScanNode, allColumns: boolean): DecodeLayout {
  let pair = layouts.get(node);
  if (pair === undefined) {
    pair = [undefined, undefined];
    layouts.set(node, pair);
  }
  const at = allColumns ? 1 : 0;
  let layout = pair[at];
  if (layout === undefined) {
    // Columns nobody reads get an id no image holds: decodeRowInto skips them (they stay NULL).
    const needed = node.needed && !allColumns ? new Set(node.needed) : null;
    layout = {
      ids: node.table.columns.map((c, i) => (needed === null || needed.has(i) ? c.id : -1 - i)),
      missing: node.table.columns.map((c) => c.missingValue),
    };
    pair[at] = layout;
  }
  return layout;
}

/** Decodes a scan's row images into rows: only the columns the plan reads (unless `allColumns`), plus the key when the scan carries it. */
export function rowDecoder(node: ScanNode, allColumns = false): (pk: Uint8Array, image: Uint8Array) => Row {
  const { ids, missing } = layoutOf(node, allColumns);
  return (pk, image) => {
    const row = decodeRowInto(image, ids, missing) as Row;
    if (node.withKey) row.push(pk as unknown as QValue, image as unknown as QValue);
    return row;
  };
}
