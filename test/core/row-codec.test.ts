import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSvcError } from '../../core/errors.js';
import { decodeRow, decodeRowInto, decodeValue, encodeRow, encodeValue, inspectRow } from '../../core/row-codec.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import { INT64_MAX, INT64_MIN, TYPE_CASES, nullable, stored, type TypeCase } from './sql-arbitraries.js';

interface Column {
  readonly id: number;
  readonly type: SqlType;
}

/** A random schema (distinct column ids) with a row of values for it. */
const schemaAndRow = fc
  .uniqueArray(fc.oneof(fc.nat(20), fc.nat(100_000)), { maxLength: 12 })
  .chain((ids) => fc.tuple(...ids.map((id) => fc.constantFrom(...TYPE_CASES).chain((c) => fc.tuple(fc.constant({ id, type: c.type }), nullable(c.value))))))
  .map((pairs) => ({ columns: pairs.map(([col]) => col) as Column[], values: pairs.map(([, v]) => v) }));

describe('row images', () => {
  it('decodeRow(encodeRow(columns, values)) gives every column back exactly', () => {
    fc.assert(
      fc.property(schemaAndRow, ({ columns, values }) => {
        const decoded = decodeRow(encodeRow(columns, values));
        expect(decoded).toEqual(new Map(columns.map((c, i) => [c.id, stored(c.type, values[i]!)])));
      }),
      { numRuns: 1000 },
    );
  });

  it('decodeRowInto aligns values to the asked ids: renamed/reordered, dropped (skipped) and added (missing) columns', () => {
    const scenario = schemaAndRow.chain(({ columns, values }) => {
      const known = columns.map((c) => c.id);
      const askedId =
        known.length > 0 ? fc.oneof(fc.constantFrom(...known), fc.integer({ min: 200_000, max: 200_010 })) : fc.integer({ min: 200_000, max: 200_010 });
      return fc.tuple(
        fc.constant({ columns, values }),
        fc.array(fc.tuple(askedId, fc.oneof(fc.constant(null), fc.integer(), fc.string())), { maxLength: 10 }),
        fc.boolean(),
      );
    });
    fc.assert(
      fc.property(scenario, ([{ columns, values }, asked, reuse]) => {
        const image = encodeRow(columns, values);
        const ids = asked.map(([id]) => id);
        const missing = asked.map(([, m]) => m);
        const expected = ids.map((id, i) => {
          const at = columns.findIndex((c) => c.id === id);
          return at < 0 ? missing[i] : stored(columns[at]!.type, values[at]!);
        });
        const out: SqlValue[] = reuse ? ['stale', 'stale', 'stale'] : [];
        const result = decodeRowInto(image, ids, missing, reuse ? out : undefined);
        expect(result).toEqual(expected);
        if (reuse) expect(result).toBe(out);
        // A second call with the same (cached) ids array gives the same answer.
        expect(decodeRowInto(image, ids, missing)).toEqual(expected);
      }),
      { numRuns: 700 },
    );
  });

  it('an image written before ADD COLUMN reads the missing value; a dropped column is skipped', () => {
    const before = encodeRow(
      [
        { id: 1, type: { name: 'int8' } },
        { id: 2, type: { name: 'text' } },
        { id: 3, type: { name: 'jsonb' } },
      ],
      [5n, 'five', { drop: 'me' }],
    );
    // id 2 renamed (same id), id 3 dropped, id 4 added with DEFAULT 42.
    expect(decodeRowInto(before, [1, 2, 4], [null, null, 42])).toEqual([5n, 'five', 42]);
    // NULL stored is not missing.
    const withNull = encodeRow(
      [
        { id: 1, type: { name: 'int8' } },
        { id: 4, type: { name: 'int4' } },
      ],
      [5n, null],
    );
    expect(decodeRowInto(withNull, [1, 4], [null, 42])).toEqual([5n, null]);
    expect(decodeRowInto(withNull, [4, 4, 1], [7, 7, null])).toEqual([null, null, 5n]);
  });

  it('round-trips the edges of every type', () => {
    const cases: [SqlType, SqlValue][] = [
      [{ name: 'int8' }, INT64_MIN],
      [{ name: 'int8' }, INT64_MAX],
      [{ name: 'int8' }, 2n ** 52n],
      [{ name: 'int8' }, -(2n ** 52n)],
      [{ name: 'int8' }, 2n ** 52n - 1n],
      [{ name: 'int8' }, -(2n ** 52n) - 1n],
      [{ name: 'timestamptz' }, 1_700_000_000_000_000n],
      [{ name: 'int2' }, -32768],
      [{ name: 'int4' }, -2147483648],
      [{ name: 'int4' }, 2147483647],
      [{ name: 'date' }, -719162],
      [{ name: 'float8' }, -0],
      [{ name: 'float8' }, NaN],
      [{ name: 'float8' }, -Infinity],
      [{ name: 'float8' }, Number.MIN_VALUE],
      [{ name: 'float4' }, -0],
      [{ name: 'float4' }, NaN],
      [{ name: 'float4' }, Infinity],
      [{ name: 'numeric' }, '1.50'],
      [{ name: 'numeric' }, '-0.000'],
      [{ name: 'numeric' }, 'NaN'],
      [{ name: 'numeric' }, '1' + '0'.repeat(500) + '.5'],
      [{ name: 'text' }, ''],
      [{ name: 'text' }, '\ufeffbom first'],
      [{ name: 'text' }, 'x'.repeat(42)],
      [{ name: 'text' }, 'x'.repeat(43)],
      [{ name: 'text' }, 'é'.repeat(100)],
      [{ name: 'text' }, '😀'.repeat(5000)],
      [{ name: 'char', length: 3 }, 'a  '],
      [{ name: 'uuid' }, '00000000-0000-0000-0000-000000000000'],
      [{ name: 'uuid' }, 'ffffffff-ffff-ffff-ffff-ffffffffffff'],
      [{ name: 'jsonb' }, { 'k\u0000': ['ü', 1.5, -3, true, null, { deep: [[[]]] }] }],
      [{ name: 'jsonb' }, 'just a string'],
      [{ name: 'jsonb' }, 0],
      [{ name: 'vector', dimension: 4 }, new Float32Array([1.5, -0, NaN, Infinity])],
      [{ name: 'vector' }, new Float32Array(0)],
      [{ name: 'bool' }, false],
      [{ name: 'text' }, null],
    ];
    for (const [type, value] of cases) {
      expect(decodeValue(encodeValue(type, value)), `${type.name} ${String(value).slice(0, 20)}`).toEqual(stored(type, value));
      expect(decodeRow(encodeRow([{ id: 9, type }], [value])).get(9)).toEqual(stored(type, value));
    }
    expect(Object.is(decodeValue(encodeValue({ name: 'float8' }, -0)), -0)).toBe(true);
    expect(decodeValue(encodeValue({ name: 'float4' }, 0.1))).toBe(Math.fround(0.1));
    // A vector that is a view into a larger buffer encodes only its own elements.
    const big = new Float32Array([9, 1, 2, 9]);
    expect(decodeValue(encodeValue({ name: 'vector', dimension: 2 }, big.subarray(1, 3)))).toEqual(new Float32Array([1, 2]));
  });

  it('encodeValue/decodeValue round-trip random values of every type', () => {
    const arb = fc.constantFrom(...TYPE_CASES).chain((c: TypeCase) => fc.tuple(fc.constant(c.type), nullable(c.value)));
    fc.assert(
      fc.property(arb, ([type, value]) => {
        expect(decodeValue(encodeValue(type, value))).toEqual(stored(type, value));
      }),
      { numRuns: 1000 },
    );
  });

  it('is compact: small ints are one byte, a 6-column row is small', () => {
    expect(encodeValue({ name: 'int8' }, 5n).length).toBe(2);
    expect(encodeValue({ name: 'int4' }, -1).length).toBe(2);
    const image = encodeRow(
      [
        { id: 1, type: { name: 'int8' } },
        { id: 2, type: { name: 'text' } },
        { id: 3, type: { name: 'int4' } },
        { id: 4, type: { name: 'float8' } },
        { id: 5, type: { name: 'bool' } },
        { id: 6, type: { name: 'timestamptz' } },
      ],
      [42n, 'alice', 30, 1.5, true, 1_700_000_000_000_000n],
    );
    // version byte, column count, then per column id + tag + payload
    expect(image.length).toBeLessThanOrEqual(1 + 1 + 3 + 8 + 3 + 10 + 2 + 10);
  });

  it('inspectRow names each stored value with its SQL type', () => {
    const image = encodeRow(
      [
        { id: 3, type: { name: 'numeric' } },
        { id: 1, type: { name: 'timestamptz' } },
        { id: 2, type: { name: 'text' } },
      ],
      ['1.0', 5n, null],
    );
    expect(inspectRow(image)).toEqual([
      { columnId: 3, typeName: 'numeric', value: '1.0' },
      { columnId: 1, typeName: 'timestamptz', value: 5n },
      { columnId: 2, typeName: null, value: null },
    ]);
  });
});

describe('type checks and corruption', () => {
  it('refuses a value of the wrong JS type with TYPE_MISMATCH naming the column id', () => {
    const bad: [SqlType, unknown][] = [
      [{ name: 'int8' }, 5],
      [{ name: 'timestamp' }, 5],
      [{ name: 'int4' }, 5n],
      [{ name: 'int4' }, 1.5],
      [{ name: 'int2' }, 40000],
      [{ name: 'int4' }, 2 ** 31],
      [{ name: 'date' }, '2024-01-01'],
      [{ name: 'float8' }, '1.5'],
      [{ name: 'numeric' }, 1.5],
      [{ name: 'numeric' }, '12abc'],
      [{ name: 'text' }, 7],
      [{ name: 'uuid' }, 'nope'],
      [{ name: 'bool' }, 'true'],
      [{ name: 'jsonb' }, undefined],
      [{ name: 'jsonb' }, { a: NaN }],
      [{ name: 'jsonb' }, { a: 1n }],
      [{ name: 'jsonb' }, new Date(0)],
      [{ name: 'jsonb' }, new Float32Array(1)],
      [{ name: 'jsonb' }, [() => 1]],
      [{ name: 'vector', dimension: 3 }, new Float32Array(2)],
      [{ name: 'vector' }, [1, 2, 3]],
      [{ name: 'int8' }, 2n ** 63n],
    ];
    for (const [type, value] of bad) {
      let caught: unknown;
      try {
        encodeRow(
          [
            { id: 1, type: { name: 'int4' } },
            { id: 77, type },
          ],
          [1, value as SqlValue],
        );
      } catch (err) {
        caught = err;
      }
      expect(caught, `${type.name} ${String(value)}`).toMatchObject({ code: 'TYPE_MISMATCH', details: { columnId: 77 } });
      expect((caught as Error).message).toContain('column id 77');
    }
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => encodeValue({ name: 'jsonb' }, cyclic as SqlValue)).toThrow(expect.objectContaining({ code: 'TYPE_MISMATCH' }));
  });

  it('a failed encode leaves the codec usable', () => {
    expect(() =>
      encodeRow(
        [
          { id: 1, type: { name: 'text' } },
          { id: 2, type: { name: 'int8' } },
        ],
        ['x'.repeat(100_000), 1],
      ),
    ).toThrow();
    expect(decodeRow(encodeRow([{ id: 1, type: { name: 'int8' } }], [1n]))).toEqual(new Map([[1, 1n]]));
  });

  it('every truncated image throws an SvcError, a cut at a column boundary included', () => {
    fc.assert(
      fc.property(schemaAndRow, fc.nat(), ({ columns, values }, cut) => {
        const image = encodeRow(columns, values);
        const truncated = image.subarray(0, cut % image.length);
        let thrown: unknown = null;
        try {
          decodeRow(truncated);
        } catch (err) {
          thrown = err;
        }
        expect(isSvcError(thrown), `${truncated.length} of ${image.length} bytes decoded`).toBe(true);
        expect(() =>
          decodeRowInto(
            truncated,
            columns.map((c) => c.id),
            columns.map(() => null),
          ),
        ).toThrow(expect.objectContaining({ code: 'INTERNAL_ERROR' }));
      }),
      { numRuns: 500 },
    );
    const image = encodeRow(
      [
        { id: 1, type: { name: 'int4' } },
        { id: 2, type: { name: 'text' } },
      ],
      [7, 'x'],
    );
    const firstColumnOnly = image.subarray(0, image.indexOf(2, 2));
    expect(() => decodeRow(firstColumnOnly)).toThrow(/truncated image: 1 more column/);
    expect(() => inspectRow(firstColumnOnly)).toThrow(/truncated image/);
    expect(() => decodeRow(Uint8Array.from([...image, 0]))).toThrow(/trailing bytes/);
  });

  it('random bytes decode or throw an SvcError, never crash or hang', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 60 }), (bytes) => {
        for (const decode of [() => decodeRow(bytes), () => decodeRowInto(bytes, [0, 1, 2], [null, null, null]), () => decodeValue(bytes)]) {
          try {
            decode();
          } catch (err) {
            expect(isSvcError(err), String(err)).toBe(true);
          }
        }
      }),
      { numRuns: 2000 },
    );
    expect(() => decodeRow(new Uint8Array([3]))).toThrow(/unknown row image version/);
    expect(() => decodeRow(new Uint8Array([2]))).toThrow(/truncated varint/);
    expect(() => decodeRow(new Uint8Array([2, 1, 1, 99]))).toThrow(/unknown tag 99/);
  });

  it('version 1 images (no column count, already in logs) still decode', () => {
    // 0x01, column 1: int4 (tag 4) zigzag 14 = 7; column 5: text (tag 9) 'hi'; column 6: NULL.
    const v1 = new Uint8Array([1, 1, 4, 14, 5, 9, 2, 0x68, 0x69, 6, 0]);
    expect(decodeRow(v1)).toEqual(
      new Map<number, SqlValue>([
        [1, 7],
        [5, 'hi'],
        [6, null],
      ]),
    );
    expect(decodeRowInto(v1, [5, 1, 9], [null, null, 'missing'])).toEqual(['hi', 7, 'missing']);
    expect(inspectRow(v1).map((c) => c.typeName)).toEqual(['int4', 'text', null]);
    expect(encodeRow([{ id: 1, type: { name: 'int4' } }], [7])).toEqual(new Uint8Array([2, 1, 1, 4, 14]));
  });
});
