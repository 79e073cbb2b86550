import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSvcError } from '../../core/errors.js';
import { compareKeys, decodeKey, encodeKey, prefixUpperBound } from '../../core/key-encoding.js';
import type { SqlType, SqlValue } from '../../core/values.js';
import { ORDERABLE_CASES, TYPE_CASES, compareDecimalText, compareNullable, nullable, sign, type TypeCase } from './sql-arbitraries.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const key1 = (type: SqlType, value: SqlValue, desc = false): Uint8Array => encodeKey([type], [value], [desc]);

/** What decodeKey gives back for a value (the key normalizes what SQL treats as equal). */
function normalized(c: TypeCase, v: SqlValue): SqlValue {
  if (v === null) return null;
  switch (c.type.name) {
    case 'int2':
    case 'int4':
    case 'date':
      return Number(v);
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
      return BigInt(v as number | bigint);
    case 'float4': {
      const f = Math.fround(v as number);
      return f === 0 ? 0 : f;
    }
    case 'float8':
      return v === 0 ? 0 : v;
    case 'char': {
      const s = (v as string).replace(/ +$/, '');
      const n = Array.from(s).length;
      return s + ' '.repeat(Math.max(0, (c.type.length ?? 1) - n));
    }
    case 'uuid':
      return (v as string).toLowerCase();
    default:
      return v;
  }
}

/** DESC reverses a comparison (0 - x, not -x: no -0). */
const flip = (x: number, desc: boolean): number => (desc ? 0 - x : x);

const CANONICAL_DECIMAL = /^(-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?|NaN|Infinity|-Infinity)$/;

describe('key order equals SQL order', () => {
  for (const c of ORDERABLE_CASES) {
    it(`${c.type.name}: sign(compareKeys) = SQL comparison, ASC and DESC, NULLs included`, () => {
      fc.assert(
        fc.property(nullable(c.value), nullable(c.value), fc.boolean(), (a, b, desc) => {
          const expected = flip(compareNullable(c, a, b), desc);
          expect(sign(compareKeys(key1(c.type, a, desc), key1(c.type, b, desc)))).toBe(expected);
        }),
        { numRuns: 400 },
      );
    });
  }

  it('composite keys order by the first component, then the next, each ASC or DESC', () => {
    const component = fc
      .constantFrom(...ORDERABLE_CASES)
      .chain((c) => fc.tuple(fc.constant(c), nullable(c.value), nullable(c.value), fc.boolean(), fc.boolean()));
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 4 }), (parts) => {
        const types = parts.map(([c]) => c.type);
        const desc = parts.map(([, , , d]) => d);
        // Often make components equal so later ones decide.
        const as = parts.map(([, a]) => a);
        const bs = parts.map(([, a, b, , same]) => (same ? a : b));
        let expected = 0;
        for (let i = 0; i < parts.length && expected === 0; i++) {
          expected = flip(compareNullable(parts[i]![0], as[i]!, bs[i]!), desc[i]!);
        }
        expect(sign(compareKeys(encodeKey(types, as, desc), encodeKey(types, bs, desc)))).toBe(expected);
      }),
      { numRuns: 1500 },
    );
  });

  it('NULL sorts after every value ascending and before every value descending', () => {
    for (const c of ORDERABLE_CASES) {
      fc.assert(
        fc.property(c.value, (v) => {
          expect(compareKeys(key1(c.type, v), key1(c.type, null))).toBeLessThan(0);
          expect(compareKeys(key1(c.type, v, true), key1(c.type, null, true))).toBeGreaterThan(0);
        }),
        { numRuns: 30 },
      );
    }
  });

  it('floats: -0 = 0, NaN above +Infinity, all NaNs equal, REAL rounds like its stored value', () => {
    for (const name of ['float4', 'float8'] as const) {
      const type = { name };
      expect(hex(key1(type, -0))).toBe(hex(key1(type, 0)));
      expect(compareKeys(key1(type, NaN), key1(type, Infinity))).toBeGreaterThan(0);
      expect(compareKeys(key1(type, -Infinity), key1(type, -3e38))).toBeLessThan(0);
      expect(hex(key1(type, NaN))).toBe(hex(key1(type, -NaN)));
    }
    expect(hex(key1({ name: 'float4' }, 0.1))).toBe(hex(key1({ name: 'float4' }, Math.fround(0.1))));
    expect(hex(key1({ name: 'float4' }, -1e-50))).toBe(hex(key1({ name: 'float4' }, 0)));
  });

  it('text is C collation (code point order), NUL and 4-byte characters included', () => {
    const text = { name: 'text' } as const;
    const sorted = ['', '\0', '\0\0', '\0a', 'a', 'a\0', 'a\0\0', 'ab', 'b', '\u00e9', '\uffff', '\u{10000}', '😀'];
    for (let i = 1; i < sorted.length; i++) {
      expect(compareKeys(key1(text, sorted[i - 1]!), key1(text, sorted[i]!)), `${sorted[i - 1]} < ${sorted[i]}`).toBeLessThan(0);
    }
    // UTF-16 order would put U+FFFF after U+10000 (0xFFFF > 0xD800); code point order does not.
    expect('\uffff' > '\u{10000}').toBe(true);
  });

  it('CHAR(n) ignores trailing spaces like PostgreSQL bpchar', () => {
    const char = { name: 'char', length: 4 } as const;
    expect(hex(key1(char, 'ab'))).toBe(hex(key1(char, 'ab  ')));
    expect(compareKeys(key1(char, 'ab'), key1(char, 'ab\u0001'))).toBeLessThan(0);
  });
});

describe('numeric keys', () => {
  const numeric = { name: 'numeric' } as const;

  it('numerically equal texts encode to identical bytes', () => {
    const groups = [
      ['1', '1.0', '1.00', '01', '001.000', '1e0', '10e-1', '0.1e1', '+1'],
      ['0', '-0', '0.000', '-0.0', '00', '0e10', '.0'],
      ['-12.34', '-12.340', '-1234e-2', '-0.1234e2'],
      ['1000', '1e3', '1000.0', '0.001e6'],
    ];
    for (const group of groups) {
      const bytes = group.map((s) => hex(key1(numeric, s)));
      expect(new Set(bytes).size, group.join(' ')).toBe(1);
    }
    fc.assert(
      fc.property(fc.tuple(fc.boolean(), fc.stringMatching(/^[1-9][0-9]{0,20}$/), fc.nat(20), fc.nat(5), fc.nat(5)), ([neg, digits, point, zi, zf]) => {
        const p = Math.min(point, digits.length);
        const s = (neg ? '-' : '') + '0'.repeat(zi) + digits.slice(0, p) + '.' + digits.slice(p) + '0'.repeat(zf);
        const plain = (neg ? '-' : '') + digits.slice(0, p) + (p < digits.length ? '.' + digits.slice(p) : '');
        expect(hex(key1(numeric, s))).toBe(hex(key1(numeric, plain.replace(/^(-?)\./, '$10.'))));
      }),
    );
  });

  it('orders any magnitude and scale, and decodes to the canonical text', () => {
    const sorted = [
      '-Infinity',
      '-1e200',
      '-123456789012345678901234567890',
      '-2',
      '-1.5',
      '-1',
      '-0.5',
      '-0.0001',
      '-1e-200',
      '0',
      '1e-200',
      '0.0001',
      '0.00011',
      '0.5',
      '1',
      '1.000000000000000000001',
      '1.5',
      '2',
      '10',
      '99.99',
      '100',
      '1e112',
      '1e200',
      'Infinity',
      'NaN',
    ];
    for (let i = 1; i < sorted.length; i++) {
      expect(compareDecimalText(sorted[i - 1]!, sorted[i]!)).toBe(-1);
      expect(compareKeys(key1(numeric, sorted[i - 1]!), key1(numeric, sorted[i]!)), `${sorted[i - 1]} < ${sorted[i]}`).toBeLessThan(0);
    }
    expect(decodeKey([numeric], key1(numeric, '-012.3400'))).toEqual(['-12.34']);
    expect(decodeKey([numeric], key1(numeric, '1e3'))).toEqual(['1000']);
    expect(decodeKey([numeric], key1(numeric, '0.000'))).toEqual(['0']);
  });

  it('decodes with the column scale of NUMERIC(p,s)', () => {
    const money = { name: 'numeric', precision: 10, scale: 2 } as const;
    expect(decodeKey([money], key1(money, '1.5'))).toEqual(['1.50']);
    expect(decodeKey([money], key1(money, '-0.05'))).toEqual(['-0.05']);
    expect(decodeKey([money], key1(money, '0'))).toEqual(['0.00']);
    expect(decodeKey([{ name: 'numeric', precision: 5 }], key1(numeric, '42'))).toEqual(['42']);
  });

  it('accepts numbers and bigints for NUMERIC and refuses bad text', () => {
    expect(hex(key1(numeric, 5n))).toBe(hex(key1(numeric, '5.0')));
    expect(hex(key1(numeric, 0.25))).toBe(hex(key1(numeric, '0.250')));
    for (const bad of ['', '-', '.', 'abc', '1.2.3', '1e', '1e+', '--1', '1 ', '-NaN', '1e9999999999']) {
      expect(() => key1(numeric, bad), bad).toThrow(expect.objectContaining({ code: 'TYPE_MISMATCH' }));
    }
  });
});

describe('round trip and prefixes', () => {
  it('decodeKey(encodeKey(x)) gives x back (normalized as SQL equality does)', () => {
    const component = fc.constantFrom(...ORDERABLE_CASES).chain((c) => fc.tuple(fc.constant(c), nullable(c.value), fc.boolean()));
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 5 }), (parts) => {
        const types = parts.map(([c]) => c.type);
        const values = parts.map(([, v]) => v);
        const desc = parts.map(([, , d]) => d);
        const decoded = decodeKey(types, encodeKey(types, values, desc), desc);
        parts.forEach(([c, v], i) => {
          if (c.type.name === 'numeric' && v !== null) {
            expect(compareDecimalText(decoded[i] as string, v as string)).toBe(0);
            expect(decoded[i]).toMatch(CANONICAL_DECIMAL);
          } else {
            expect(decoded[i]).toEqual(normalized(c, v));
          }
        });
      }),
      { numRuns: 1500 },
    );
  });

  it('integer types accept number or bigint and decode to their one representation', () => {
    expect(decodeKey([{ name: 'int4' }], encodeKey([{ name: 'int4' }], [7n]))).toEqual([7]);
    expect(decodeKey([{ name: 'int8' }], encodeKey([{ name: 'int8' }], [-7]))).toEqual([-7n]);
    expect(hex(key1({ name: 'int8' }, 2 ** 60))).toBe(hex(key1({ name: 'int8' }, 2n ** 60n)));
    expect(hex(key1({ name: 'timestamptz' }, -1))).toBe(hex(key1({ name: 'timestamptz' }, -1n)));
    expect(hex(key1({ name: 'int8' }, 0n))).toBe('018000000000000000');
  });

  it('a prefix of the components is a byte prefix, and prefixUpperBound bounds its range', () => {
    const component = fc.constantFrom(...ORDERABLE_CASES).chain((c) => fc.tuple(fc.constant(c), nullable(c.value), nullable(c.value), fc.boolean()));
    fc.assert(
      fc.property(fc.array(component, { minLength: 2, maxLength: 4 }), fc.nat(), (parts, cut) => {
        const k = 1 + (cut % (parts.length - 1));
        const types = parts.map(([c]) => c.type);
        const desc = parts.map(([, , , d]) => d);
        const full = encodeKey(
          types,
          parts.map(([, a]) => a),
          desc,
        );
        const prefix = encodeKey(
          types,
          parts.slice(0, k).map(([, a]) => a),
          desc,
        );
        expect(hex(full.subarray(0, prefix.length))).toBe(hex(prefix));
        const upper = prefixUpperBound(prefix);
        expect(compareKeys(prefix, full)).toBeLessThanOrEqual(0);
        if (upper !== null) expect(compareKeys(full, upper)).toBeLessThan(0);
        // A key whose first k components differ in SQL terms is outside [prefix, upper).
        const other = parts.map(([, a, b], i) => (i < k ? b : a));
        const differs = parts.slice(0, k).some(([c, a, b]) => compareNullable(c, a, b) !== 0);
        const otherKey = encodeKey(types, other, desc);
        const inside = compareKeys(otherKey, prefix) >= 0 && (upper === null || compareKeys(otherKey, upper) < 0);
        expect(inside).toBe(!differs);
      }),
      { numRuns: 1500 },
    );
  });

  it('prefixUpperBound: smallest string above the prefix range, null when none exists', () => {
    expect(prefixUpperBound(new Uint8Array([]))).toBeNull();
    expect(prefixUpperBound(new Uint8Array([0xff, 0xff]))).toBeNull();
    expect([...prefixUpperBound(new Uint8Array([1, 2]))!]).toEqual([1, 3]);
    expect([...prefixUpperBound(new Uint8Array([1, 0xff, 0xff]))!]).toEqual([2]);
    const input = new Uint8Array([5, 0xff]);
    prefixUpperBound(input);
    expect([...input]).toEqual([5, 0xff]);
  });

  it('compareKeys is bytewise with shorter-first on ties', () => {
    expect(compareKeys(new Uint8Array([1]), new Uint8Array([1, 0]))).toBeLessThan(0);
    expect(compareKeys(new Uint8Array([2]), new Uint8Array([1, 0xff]))).toBeGreaterThan(0);
    expect(compareKeys(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(0);
  });

  it('encodes long strings with NULs (the native encoder path) and empty keys', () => {
    const text = { name: 'text' } as const;
    const long = 'x'.repeat(100) + '\0' + 'é'.repeat(60) + '\0';
    expect(decodeKey([text], key1(text, long))).toEqual([long]);
    expect(decodeKey([text], key1(text, long, true), [true])).toEqual([long]);
    expect(encodeKey([text], []).length).toBe(0);
    expect(decodeKey([], new Uint8Array(0))).toEqual([]);
    const huge = 'y'.repeat(200_000);
    expect(decodeKey([text], key1(text, huge))).toEqual([huge]);
  });
});

describe('refusals', () => {
  it('throws TYPE_MISMATCH for a wrong JS type', () => {
    const cases: [SqlType, unknown][] = [
      [{ name: 'bool' }, 1],
      [{ name: 'int4' }, 1.5],
      [{ name: 'int4' }, '1'],
      [{ name: 'int8' }, 2n ** 63n],
      [{ name: 'int8' }, -(2 ** 64)],
      [{ name: 'float8' }, 1n],
      [{ name: 'text' }, 5],
      [{ name: 'uuid' }, 'not-a-uuid'],
      [{ name: 'uuid' }, '0f8e6a1c-1111-2222-3333-44445555666g'],
      [{ name: 'date' }, undefined],
      [{ name: 'numeric' }, {}],
    ];
    for (const [type, value] of cases) {
      expect(() => encodeKey([type], [value as SqlValue]), `${type.name} ${String(value)}`).toThrow(expect.objectContaining({ code: 'TYPE_MISMATCH' }));
    }
  });

  it('refuses jsonb and vector keys with a clear message', () => {
    expect(() => encodeKey([{ name: 'jsonb' }], [{ a: 1 }])).toThrow(/JSONB values are not orderable/);
    expect(() => encodeKey([{ name: 'vector', dimension: 2 }], [new Float32Array(2)])).toThrow(/VECTOR\(2\) values are not orderable/);
    expect(() => decodeKey([{ name: 'jsonb' }], new Uint8Array([1, 0]))).toThrow(expect.objectContaining({ code: 'TYPE_MISMATCH' }));
  });

  it('uuid keys are 16 raw bytes and accept upper-case input', () => {
    const uuid = { name: 'uuid' } as const;
    const k = key1(uuid, '0F8E6A1C-AbCd-4EF0-8123-456789ABCDEF');
    expect(k.length).toBe(17);
    expect(decodeKey([uuid], k)).toEqual(['0f8e6a1c-abcd-4ef0-8123-456789abcdef']);
  });

  it('corrupt or mismatched key bytes throw an SvcError, never crash', () => {
    const types = TYPE_CASES.filter((c) => c.compare).map((c) => c.type);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.constantFrom(...types), fc.boolean(), (bytes, type, desc) => {
        try {
          decodeKey([type, type], bytes, [desc, !desc]);
        } catch (err) {
          expect(isSvcError(err)).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
