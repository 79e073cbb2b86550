/** The row image format shared by core/row-codec.ts (encode) and core/row-decode.ts (decode). */
import type { SqlTypeName } from './values.js';

/**
 * Version 2 (written now): a column count after the version byte, so an image cut at a column
 * boundary is refused. Version 1 (no count; images already in logs) still decodes.
 */
export const ROW_IMAGE_VERSION = 2;
export const ROW_IMAGE_VERSION_V1 = 1;

/** Value tags. Append new ones; never renumber (images in the log keep them forever). */
export const ROW_TAG = {
  null: 0,
  false: 1,
  true: 2,
  int2: 3,
  int4: 4,
  int8: 5,
  float4: 6,
  float8: 7,
  numeric: 8,
  text: 9,
  varchar: 10,
  char: 11,
  uuid: 12,
  jsonb: 13,
  timestamp: 14,
  timestamptz: 15,
  date: 16,
  vector: 17,
  /** varuint element count, then each element as a tagged value (a nested array for more dimensions). */
  array: 18,
} as const;

/** The SQL type a tag stands for (null for the NULL tag), indexed by tag. */
export const TYPE_NAME_OF_ROW_TAG: readonly (SqlTypeName | null)[] = [
  null,
  'bool',
  'bool',
  'int2',
  'int4',
  'int8',
  'float4',
  'float8',
  'numeric',
  'text',
  'varchar',
  'char',
  'uuid',
  'jsonb',
  'timestamp',
  'timestamptz',
  'date',
  'vector',
  'array',
];
