/** JSON schemas of the row routes (rows-routes.ts, row-routes.ts). */

/** GET rows: the spec's limit default and maximum. */
export const ROWS_LIMIT_DEFAULT = 100;
export const ROWS_LIMIT_MAX = 10_000;
/** Largest offset: an integer SQL can spell (beyond it no table has rows). */
export const OFFSET_MAX = 1_000_000_000_000;
/** A cursor is a few key values; anything longer is not one of ours. */
const CURSOR_BYTES_MAX = 16 * 1024;

export const rowsParams = {
  type: 'object',
  required: ['table_name'],
  additionalProperties: false,
  properties: { table_name: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

export const rowParams = {
  type: 'object',
  required: ['table_name', 'id'],
  additionalProperties: false,
  properties: { table_name: { type: 'string', minLength: 1, maxLength: 200 }, id: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

const columnList = { type: 'array', maxItems: 1600, items: { type: 'string', minLength: 1, maxLength: 128 } } as const;
const filterText = (maxBytes: number) => ({ type: 'string', maxLength: maxBytes });
const updates = { type: 'object', minProperties: 1, maxProperties: 1600 } as const;

export function listRowsQuery(queryTextBytesMax: number) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      filter: filterText(queryTextBytesMax),
      select: { type: 'string', maxLength: 64 * 1024 },
      order_by: { type: 'string', maxLength: 64 * 1024 },
      // The maximum is checked by the handler: over it is a clear 400 LIMIT_EXCEEDED.
      limit: { type: 'integer', minimum: 1, default: ROWS_LIMIT_DEFAULT },
      offset: { type: 'integer', minimum: 0, maximum: OFFSET_MAX, default: 0 },
      cursor: { type: 'string', minLength: 1, maxLength: CURSOR_BYTES_MAX },
    },
  } as const;
}

export const rowQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { select: { type: 'string', maxLength: 64 * 1024 } },
} as const;

const onConflict = {
  type: 'object',
  additionalProperties: false,
  properties: {
    columns: columnList,
    action: { type: 'string', enum: ['update', 'nothing'], default: 'update' },
    update_columns: columnList,
  },
} as const;

/**
 * POST rows: an object with a `row` or `rows` key is the envelope (`row` | `rows`, `returning`,
 * `on_conflict`, nothing else); an array is a list of rows; any other object is one row (the
 * quick-start form). `row` with `rows` is refused by the handler, with a message saying so.
 */
export const insertRowsBody = {
  anyOf: [{ type: 'object' }, { type: 'array' }],
  if: { type: 'object', anyOf: [{ required: ['row'] }, { required: ['rows'] }] },
  then: {
    type: 'object',
    additionalProperties: false,
    properties: {
      row: { type: 'object' },
      rows: { type: 'array', minItems: 1, items: { type: 'object' } },
      returning: columnList,
      on_conflict: onConflict,
    },
  },
  else: { if: { type: 'array' }, then: { type: 'array', minItems: 1, items: { type: 'object' } } },
} as const;

export function updateRowsBody(queryTextBytesMax: number) {
  return {
    type: 'object',
    required: ['updates'],
    additionalProperties: false,
    // filter is checked by the handler: a missing one is a 400 that says how to update every row.
    properties: { filter: filterText(queryTextBytesMax), updates, returning: columnList },
  } as const;
}

export function deleteRowsBody(queryTextBytesMax: number) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: { filter: filterText(queryTextBytesMax), returning: columnList },
  } as const;
}

export const patchRowBody = {
  type: 'object',
  required: ['updates'],
  additionalProperties: false,
  properties: { updates, returning: columnList },
} as const;
