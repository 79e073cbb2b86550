import { decodeRowInto } from '../../../core/row-codec.js';
import type { QValue } from '../../types/contract.js';
import type { ScanNode } from '../../plan/nodes.js';
import type { Row } from '../context.js';

/** Decodes a scan's row images into rows: only the columns the plan reads (unless `allColumns`), plus the key when the scan carries it. */
export function rowDecoder(node: ScanNode, allColumns = false): (pk: Uint8Array, image: Uint8Array) => Row {
  // Columns nobody reads get an id no image holds: decodeRowInto skips them (they stay NULL).
  const needed = node.needed && !allColumns ? new Set(node.needed) : null;
  const ids = node.table.columns.map((c, i) => (needed === null || needed.has(i) ? c.id : -1 - i));
  const missing = node.table.columns.map((c) => c.missingValue);
  return (pk, image) => {
    const row = decodeRowInto(image, ids, missing) as Row;
    if (node.withKey) row.push(pk as unknown as QValue, image as unknown as QValue);
    return row;
  };
}
