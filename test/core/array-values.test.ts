/**
 * Array columns in core: the row image (tag 18), the key encoding (PostgreSQL's array order, the
 * same as the engine's comparator) and the log record's column type (schema v3).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ColumnDef, TableDef } from '../../core/catalog.js';
import { compareKeys, decodeKey, encodeKey } from '../../core/key-encoding.js';
import { decodeLogRecord, encodeLogRecord } from '../../core/log-records.js';
import { decodeRow, decodeValue, encodeRow, encodeValue, inspectRow } from '../../core/row-codec.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import { typeSystem } from '../../query/types/index.js';

const INT_ARRAY: SqlType = { name: 'array', element: { name: 'int4' } };
const TEXT_ARRAY: SqlType = { name: 'array', element: { name: 'text' } };
const NUMERIC_ARRAY: SqlType = { name: 'array', element: { name: 'numeric' } };

const intArray = fc.array(fc.option(fc.integer({ min: -2147483648, max: 2147483647 }), { nil: null }), { maxLength: 6 });
const textArray = fc.array(fc.option(fc.string({ maxLength: 4 }), { nil: null }), { maxLength: 5 });
const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);

describe('array values in row images', () => {
  it('round-trip: NULL elements, empty arrays, nested arrays, exact numerics and jsonb', () => {
    const columns = [
      { id: 1, type: INT_ARRAY },
      { id: 2, type: TEXT_ARRAY },
      { id: 3, type: NUMERIC_ARRAY },
      { id: 4, type: { name: 'array', element: { name: 'jsonb' } } as SqlType },
      { id: 5, type: { name: 'array', element: { name: 'int8' } } as SqlType },
      { id: 6, type: INT_ARRAY },
    ];
    const values: SqlValue[] = [
      [
        [1, 2],
        [3, null],
      ],
      ['', 'NULL', null, 'ü'],
      ['1.50', '-0.000', 'NaN'],
      [[1, 2], { a: 1 }, null],
      [9007199254740993n, null],
      [],
    ];
    const image = encodeRow(columns, values);
    expect([...decodeRow(image).values()]).toEqual(values);
    expect(inspectRow(image).map((c) => c.typeName)).toEqual(['array', 'array', 'array', 'array', 'array', 'array']);
    fc.assert(
      fc.property(intArray, (a) => {
        expect(decodeValue(encodeValue(INT_ARRAY, a))).toEqual(a);
      }),
    );
  });

  it('refuses elements of the wrong type and values that are not arrays', () => {
    expect(() => encodeValue(INT_ARRAY, [1, 'x'])).toThrow(/expected INTEGER/);
    expect(() => encodeValue(INT_ARRAY, 1)).toThrow(/expected INTEGER\[\]/);
    expect(() => encodeValue(INT_ARRAY, [2 ** 31])).toThrow(/out of range/);
  });
});

describe('array keys', () => {
  const check = (type: SqlType, arb: fc.Arbitrary<SqlValue[]>) => {
    const cmp = typeSystem.comparator(type);
    fc.assert(
      fc.property(arb, arb, fc.boolean(), (a, b, desc) => {
        const ka = encodeKey([type], [a], [desc]);
        const kb = encodeKey([type], [b], [desc]);
        expect(sign(compareKeys(ka, kb))).toBe(desc ? -sign(cmp(a, b)) || 0 : sign(cmp(a, b)));
        expect(decodeKey([type], ka, [desc])).toEqual([a]);
      }),
      { numRuns: 500 },
    );
  };

  it('sort bytewise in the engine order (NULL element last, then shorter first), ASC and DESC', () => {
    check(INT_ARRAY, intArray);
    check(TEXT_ARRAY, textArray);
  });

  it('nested arrays and a composite key with an array before another column', () => {
    const grid = [
      [1, 2],
      [3, 4],
    ];
    expect(decodeKey([INT_ARRAY, { name: 'int4' }], encodeKey([INT_ARRAY, { name: 'int4' }], [grid, 7]))).toEqual([grid, 7]);
    const k = (v: SqlValue[]): Uint8Array => encodeKey([INT_ARRAY, { name: 'int4' }], [v, 1]);
    expect(compareKeys(k([1]), k([1, 0]))).toBeLessThan(0);
    expect(compareKeys(k([1, null]), k([1, 5]))).toBeGreaterThan(0);
    expect(compareKeys(k([]), k([null]))).toBeLessThan(0);
  });

  it('numeric elements equal by value share a key', () => {
    expect(encodeKey([NUMERIC_ARRAY], [['1.0', '2']])).toEqual(encodeKey([NUMERIC_ARRAY], [['1.00', '2.000']]));
  });
});

describe('array column types in log records (schema v3)', () => {
  it('a table with array columns round-trips, element modifiers and default included', () => {
    const column = (id: number, name: string, type: SqlType, missingValue: SqlValue): ColumnDef => ({
      id,
      name,
      type,
      nullable: true,
      defaultExpr: null,
      missingValue,
      sequence: null,
    });
    const table: TableDef = {
      id: 7,
      tenant: 'default',
      schema: 'public',
      name: 'tags',
      kind: 'table',
      columns: [
        column(1, 'id', { name: 'int4' }, null),
        column(2, 'labels', { name: 'array', element: { name: 'varchar', length: 3 } }, ['ab', null]),
        column(3, 'amounts', { name: 'array', element: { name: 'numeric', precision: 6, scale: 2 } }, null),
      ],
      primaryKey: [1],
      indexes: [],
      constraints: [],
      viewSql: null,
      createdAtMicros: 1n,
      updatedAtMicros: 1n,
    };
    const record = decodeLogRecord(encodeLogRecord({ type: 'txn', txnId: 't', tenant: 'default', timestampMicros: 1n, ops: [{ kind: 'put_table', table }] }));
    expect(record.ops[0]).toEqual({ kind: 'put_table', table });
  });
});
