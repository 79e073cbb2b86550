import type { QValue } from '../types/contract.js';

/**
 * JSON cells of the usual value for their column's type, converted without the type system
 * (insert-json.ts JsonCells), and which columns have such a plain kind (kept per definition: table-shape.ts).
 */

/** Column types whose usual JSON value converts without the type system (plainCell); GENERAL: always through it. */
const GENERAL = 0;
const INT8 = 1;
const FLOAT8 = 2;
const TEXT = 3;
const INT4 = 4;
const BOOL = 5;

/** The plain kind of a column type (table-shape.ts keeps one per column of a definition). */
export function plainKindOf(type: string): number {
  switch (type) {
    case 'int8':
      return INT8;
    case 'float8':
      return FLOAT8;
    case 'text':
      return TEXT;
    case 'int4':
      return INT4;
    case 'bool':
      return BOOL;
    default:
      return GENERAL;
  }
}

/**
 * What types.fromJson gives for the usual JSON value of a plain column type (a safe integer for
 * bigint, a number for double precision, a string for text, an integer in range for integer, a
 * boolean), undefined for anything else: that goes through types.fromJson, which converts or
 * refuses it with its own message. A bulk request converts 10,000 x width cells: this skips the
 * type system's dispatch and typmod step (none of these types has a modifier) for each.
 */
export function plainCell(kind: number, json: unknown): QValue | undefined {
  switch (kind) {
    case INT8:
      return typeof json === 'number' && Number.isSafeInteger(json) ? BigInt(json) : undefined;
    case FLOAT8:
      return typeof json === 'number' ? json : undefined;
    case TEXT:
      return typeof json === 'string' ? json : undefined;
    case INT4:
      return typeof json === 'number' && Number.isInteger(json) && json >= -2147483648 && json <= 2147483647 ? json : undefined;
    case BOOL:
      return typeof json === 'boolean' ? json : undefined;
    default:
      return undefined;
  }
}
