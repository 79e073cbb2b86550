import type { QValue } from '../types/contract.js';

/**
 * Whether an UPDATE left a column's value as it was (writer.ts update: checks of unchanged columns
 * do not run). Bigints compare by value with numbers; arrays and JSON by their JSON text.
 */
export function sameValue(a: QValue, b: QValue): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (typeof a === 'bigint' || typeof b === 'bigint') return String(a) === String(b);
  if (typeof a === 'object' || typeof b === 'object')
    return JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? String(v) : v)) === JSON.stringify(b, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  return false;
}
