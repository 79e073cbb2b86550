/**
 * query/dml/values-literals.ts: a VALUES literal bound straight to its column type gives exactly what
 * the generic binding gives (bindExpr, then coerce in assignment mode): the same constant, or the
 * same error (code, message, details) where the generic path fails while binding. Where the generic
 * path would bind a cast that fails only when run, the fast binder declines (null).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CatalogState } from '../../projections/index.js';
import { BindContext, bindExpr, coerce, Scope, type ExprEnv } from '../../query/bind/index.js';
import { LiteralBinder } from '../../query/dml/values-literals.js';
import type { SqlExpr } from '../../query/parse/index.js';
import { typeSystem } from '../../query/index.js';

const ctx = new BindContext(typeSystem, {} as CatalogState, 'default', () => {
  throw new Error('no views here');
});
const env = { ctx, scope: new Scope(null), clause: 'VALUES', allowAggregates: false, allowWindows: false } as unknown as ExprEnv;

const TARGETS = [
  'smallint',
  'integer',
  'bigint',
  'real',
  'double precision',
  'numeric',
  'numeric(6,2)',
  'text',
  'varchar(3)',
  'char(2)',
  'boolean',
  'integer[]',
  'text[]',
  'jsonb',
  'uuid',
  'date',
  'interval',
  'timestamptz',
  'vector(2)',
];

function outcome(fn: () => unknown): unknown {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    const e = error as { code?: string; message: string; details?: unknown };
    return { ok: false, code: e.code, message: e.message, details: e.details };
  }
}

const numberText = fc.oneof(
  fc.constantFrom(
    '0',
    '1',
    '32767',
    '32768',
    '2147483647',
    '2147483648',
    '9223372036854775807',
    '9223372036854775808',
    '1e400',
    '-0',
    '0.5',
    '-1.5',
    '1.005',
    '9999.995',
    '.5',
    '5.',
    '00.5',
    '123456789012345',
    '1234567890123456',
    '123456789012345.5',
    '1.123456789012345',
    '1.1234567890123456',
    // Negative numbers (the parser folds the minus into the text) are bound by the fast binder too.
    '-1',
    '-32768',
    '-32769',
    '-2147483648',
    '-2147483649',
    '-123456789012345',
    '-1234567890123456',
    '-0.0',
    '-0.000',
    '-00.5',
    '-123456789012345.5',
    '-1.123456789012345',
    '-1.5e3',
  ),
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map(String),
);
const stringValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.constantFrom(
    '1',
    '1.5',
    ' 7 ',
    'abc',
    'abcd',
    'true',
    'yes',
    'f',
    '{1,2}',
    '{a,"b c"}',
    '{1,x}',
    '[1]',
    '{"k": 1}',
    '{bad',
    '2024-02-30',
    '2024-02-29',
    '1 day',
    '\\x41',
    'nan',
    'Infinity',
    '00000000-0000-0000-0000-000000000001',
  ),
);
const literal: fc.Arbitrary<SqlExpr> = fc.oneof(
  numberText.map((text) => ({ kind: 'number', text, loc: 0 }) as const),
  stringValue.map((value) => ({ kind: 'string', value, loc: 0 }) as const),
  fc.boolean().map((value) => ({ kind: 'bool', value, loc: 0 }) as const),
  fc.constant({ kind: 'null', loc: 0 } as const),
);

describe('LiteralBinder = bindExpr + coerce(assignment)', () => {
  it('random literals into every column type', () => {
    const types = TARGETS.map((t) => typeSystem.parseTypeName(t));
    fc.assert(
      fc.property(literal, fc.nat(types.length - 1), (node, t) => {
        const target = types[t]!;
        const fast = outcome(() => new LiteralBinder(ctx, target).bind(node));
        if ((fast as { ok: boolean; value?: unknown }).ok && (fast as { value: unknown }).value === null) return; // declined
        const generic = outcome(() => coerce(ctx, bindExpr(node, env), target, 'assignment'));
        expect(fast, `${JSON.stringify(node)} into ${TARGETS[t]}`).toStrictEqual(generic);
      }),
      { numRuns: 3000 },
    );
  });

  it('binds negative numbers itself, as positive ones (no generic binding per cell); -0.0 into float8 is left to the generic path', () => {
    const cases: [string, string, unknown][] = [
      ['-5', 'bigint', -5n],
      ['-2147483648', 'integer', -2147483648],
      ['-2147483649', 'bigint', -2147483649n],
      ['-0', 'integer', 0],
      ['-1.5', 'double precision', -1.5],
      ['-7', 'double precision', -7],
    ];
    for (const [text, type, value] of cases) {
      const target = typeSystem.parseTypeName(type);
      const node = { kind: 'number', text, loc: 0 } as const;
      const fast = new LiteralBinder(ctx, target).bind(node);
      expect(fast, `${text} into ${type}`).not.toBeNull();
      expect(fast).toStrictEqual(coerce(ctx, bindExpr(node, env), target, 'assignment'));
      expect((fast as { value: unknown }).value).toStrictEqual(value); // Object.is: 0, not -0
    }
    expect(new LiteralBinder(ctx, typeSystem.parseTypeName('double precision')).bind({ kind: 'number', text: '-0.0', loc: 0 })).toBeNull();
  });
});
