/**
 * A VALUES list whose binding is not kept (a text past PARSE_CACHE_TEXT_CHARS_MAX: a bulk insert)
 * is bound straight into its rows (query/dml/row-source.ts boundValuesRows), without a constant cell
 * per value. Against the kept binding's path (bindValues + valuesRows, a short text): the same
 * statement, made long by spaces after INSERT, must answer the same (rows, RETURNING, errors with
 * their code, message and details) and leave the same rows and sequence values.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARSE_CACHE_TEXT_CHARS_MAX } from '../../query/parse-cache.js';
import { openSql, type SqlHarness } from './helpers.js';

const BASE = { timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
/** Spaces after INSERT: the long text's positions are this much further on. */
const PAD = PARSE_CACHE_TEXT_CHARS_MAX + 10;

type Outcome = { ok: true; command: string; affected: number | null; rows: unknown[] } | { ok: false; code: string; message: string; details: unknown };

async function outcome(run: Promise<{ command: string; affectedRows: number | null; rows: unknown[] }>, shift = 0): Promise<Outcome> {
  try {
    const r = await run;
    return { ok: true, command: r.command, affected: r.affectedRows, rows: r.rows };
  } catch (error) {
    const e = error as { code: string; message: string; details: Record<string, unknown> };
    const details = typeof e.details?.position === 'number' ? { ...e.details, position: e.details.position - shift } : e.details;
    return { ok: false, code: e.code, message: e.message, details };
  }
}

const COLUMNS = ['id', 'i', 'b', 'f', 't', 'ok', 'n', 'tags'] as const;
const DDL =
  "CREATE TABLE d (id SERIAL PRIMARY KEY, i INTEGER, b BIGINT NOT NULL DEFAULT 7, f DOUBLE PRECISION, t TEXT DEFAULT 'dflt', ok BOOLEAN, " +
  'n NUMERIC(6,2) CHECK (n IS NULL OR n < 1000), tags TEXT[])';

/** Any cell, whatever its column: mostly errors (types, ranges, division by zero) but of both kinds. */
const anyCell = fc.oneof(
  fc.integer({ min: -5, max: 400 }).map(String),
  fc.constantFrom('2147483647', '2147483648', '9223372036854775807', '9223372036854775808', '-0', '007', '1e3'),
  fc.constantFrom('1.5', '0.25', '12345.678', '.5', '3.'),
  fc.constantFrom("'x'", "'it''s'", "'12'", "'abc'", "'t'", "'{a,b}'", "''", "'2.5'"),
  fc.constantFrom('NULL', 'DEFAULT', 'TRUE', 'FALSE', '$1', '$2'),
  fc.constantFrom('1 + 2', '(SELECT 5)', '1 / 0', "length('abc')", "ARRAY['p']", "'5'::int", '-(3)'),
);
const int = fc.oneof(fc.integer({ min: -5, max: 400 }).map(String), fc.constantFrom('NULL', '$1', '1 + 2', '(SELECT 5)', "'12'", '-(3)', '007'));
/** A cell that fits its column, mostly. */
const fitting: Record<(typeof COLUMNS)[number], fc.Arbitrary<string>> = {
  id: fc.constant('DEFAULT'),
  i: int,
  b: fc.oneof(
    int.filter((c) => c !== 'NULL'),
    fc.constantFrom('DEFAULT', '9223372036854775807', '2147483648'),
  ),
  f: fc.oneof(int, fc.constantFrom('1.5', '0.25', '12345.678', '.5', '3.', '1e3', "'2.5'")),
  t: fc.constantFrom("'x'", "'it''s'", "''", 'NULL', 'DEFAULT', '$2', "'abc'"),
  ok: fc.constantFrom('TRUE', 'FALSE', 'NULL', "'t'", 'DEFAULT'),
  n: fc.constantFrom('1.5', '999.99', '12', 'NULL', "'2.5'", '-3'),
  tags: fc.constantFrom("ARRAY['p']", "'{a,b}'", 'NULL', "'{}'"),
};

const statement = fc
  .tuple(fc.oneof(fc.constant(null), fc.shuffledSubarray([...COLUMNS], { minLength: 1 })), fc.constantFrom('', ' RETURNING *', ' RETURNING id, t'))
  .chain(([columns, returning]) => {
    const names = columns ?? [...COLUMNS];
    const cell = (name: (typeof COLUMNS)[number]) => fc.oneof({ weight: 30, arbitrary: fitting[name] }, { weight: 1, arbitrary: anyCell });
    const row = fc.tuple(...names.map(cell));
    // Now and then a row one cell too long or too short (an error either way).
    const odd = fc.array(anyCell, { minLength: 1, maxLength: names.length + 1 });
    const rows = fc.array(fc.oneof({ weight: 40, arbitrary: row }, { weight: 1, arbitrary: odd }), { minLength: 1, maxLength: 12 });
    const list = columns ? ` (${columns.join(', ')})` : '';
    return rows.map((rs) => `INTO d${list} VALUES ${rs.map((r) => `(${r.join(', ')})`).join(', ')}${returning}`);
  });

describe('a VALUES list bound straight into its rows answers as the kept binding does', () => {
  let kept: SqlHarness;
  let direct: SqlHarness;

  beforeAll(async () => {
    kept = await openSql();
    direct = await openSql();
    await kept.q(DDL);
    await direct.q(DDL);
  });
  afterAll(async () => {
    await kept?.close();
    await direct?.close();
  });

  async function both(rest: string, params: readonly unknown[]): Promise<Outcome> {
    const short = `INSERT ${rest}`;
    const long = `INSERT${' '.repeat(PAD)}${rest}`;
    expect(short.length).toBeLessThanOrEqual(PARSE_CACHE_TEXT_CHARS_MAX);
    const a = await outcome(kept.engine.execute(short, { ...BASE, params: [...params] }));
    const b = await outcome(direct.engine.execute(long, { ...BASE, params: [...params] }), PAD);
    expect(b, short).toEqual(a);
    return a;
  }

  async function sameRows(): Promise<void> {
    const query = 'SELECT * FROM d ORDER BY id';
    expect(await direct.rows(query)).toEqual(await kept.rows(query));
    const sequence = "SELECT nextval('d_id_seq') AS next";
    expect(await outcome(direct.q(sequence))).toEqual(await outcome(kept.q(sequence)));
  }

  it('random rows of literals, DEFAULT, parameters and expressions, with errors of binding and of evaluation', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(statement, fc.constantFrom([7, 'x'], [null, '3'], [7, 'x'], []), async (rest, params) => {
        if ((await both(rest, params)).ok) answered += 1;
      }),
      { numRuns: 120, seed: 16 },
    );
    await sameRows();
    expect(answered).toBeGreaterThan(20);
  });

  it('a binding error in a late row wins over an evaluation error in an early one; DEFAULT and serial fill in row order', async () => {
    const late = `INTO d (i, t) VALUES (1 / 0, 'a'), ${Array.from({ length: 50 }, (_, k) => `(${k}, 'r${k}')`).join(', ')}, ('abc', 'z')`;
    expect(await both(late, [])).toMatchObject({ ok: false, code: 'TYPE_MISMATCH', message: 'invalid input syntax for type integer: "abc"' });
    const rows = Array.from(
      { length: 300 },
      (_, k) => `(DEFAULT, ${k}, DEFAULT, ${k}.5, 'name-${k}', ${k % 2 === 0 ? 'TRUE' : 'NULL'}, ${k % 900}.25, ARRAY['t${k}'])`,
    );
    const fine = await both(`INTO d VALUES ${rows.slice(0, 40).join(', ')} RETURNING id, b, t`, []);
    expect(fine, JSON.stringify(fine)).toMatchObject({ ok: true, affected: 40 });
    // Long on both sides (no kept binding on either): still the same rows.
    const long = `INSERT INTO d VALUES ${rows.join(', ')}`;
    expect(long.length).toBeGreaterThan(PARSE_CACHE_TEXT_CHARS_MAX);
    expect(await outcome(direct.q(long))).toEqual(await outcome(kept.q(long)));
    await sameRows();
  });
});
