/**
 * query/parse/fast-values.ts (the hand scanner of INSERT ... VALUES of simple literals) against the
 * general parse (libpg-query + translate/): for any text the fast path either declines (null) or
 * gives exactly the statement the general path gives (text, offset, positions, literal texts, $n
 * count); a text the general path refuses is never accepted. Random texts mix simple literals with
 * the tricky ones (casts, E'', comments, adjacent strings, odd whitespace, numbers at type bounds).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseValuesInsert } from '../../query/parse/fast-values.js';
import { parseGeneral, parseSql } from '../../query/parse/sql-parser.js';
import { openSql } from './helpers.js';

const fast = (sql: string) => parseValuesInsert(sql, parseGeneral);

function general(sql: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: parseGeneral(sql) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The fast path's answer is the general path's, or it declined. Returns whether it answered. */
function agrees(sql: string): boolean {
  const f = fast(sql);
  if (f === null) return false;
  const g = general(sql);
  expect(g.ok, `general parse refused what the fast path took: ${JSON.stringify(sql)}`).toBe(true);
  expect([f], JSON.stringify(sql)).toStrictEqual((g as { value: unknown }).value);
  return true;
}

const someTricky = <T>(plain: fc.Arbitrary<T>, odd: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 6, arbitrary: plain }, { weight: 1, arbitrary: odd });
const randomCase = (word: string) =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((up) => [...word].map((c, i) => (up[i] ? c.toUpperCase() : c)).join(''));
const space = fc.constantFrom(' ', '  ', '\n', '\t', '\r\n', ' \n\t');
const oddSpace = fc.constantFrom('\f', '\v', '/* c */', '-- c\n', '\u00a0', '', ' /*x*/ ');
const anySpace = fc.oneof({ weight: 40, arbitrary: space }, { weight: 1, arbitrary: oddSpace });

const BOUNDS = [0n, 1n, 32767n, 32768n, 2147483647n, 2147483648n, 9223372036854775807n, 9223372036854775808n, 10n ** 30n];
const integer = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }).map(String),
  fc.constantFrom(...BOUNDS).map(String),
  fc.bigInt({ min: 0n, max: 10n ** 25n }).map(String),
  fc.tuple(fc.constantFrom('0', '00', '000000000000'), fc.constantFrom(...BOUNDS)).map(([z, n]) => z + String(n)),
);
const decimal = fc.oneof(
  fc.tuple(fc.nat(100000), fc.nat(100000)).map(([a, b]) => `${a}.${b}`),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: 0 }).map(String),
  fc.constantFrom('.5', '5.', '1.e3', '1e5', '1E-5', '1e+05', '0.000', '1.7976931348623157e308', '1e400', '4.9e-324'),
);
const number = fc.tuple(fc.constantFrom('', '', '-', '- ', '-\n'), fc.oneof(integer, decimal)).map(([sign, n]) => sign + n);
const stringValue = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom("it's", "''", '\\', '\\n', 'a\nb', '\u0000x', '\ud800', '\udc00a', '😀', 'x\\'),
);
const stringLit = stringValue.map((v) => `'${v.replaceAll("'", "''")}'`);
const word = fc.constantFrom('null', 'true', 'false', 'default').chain(randomCase);
const param = fc.integer({ min: 0, max: 12 }).map((n) => `$${n}`);
const tricky = fc.constantFrom(
  "E'a\\nb'",
  '1::int',
  "'a' 'b'",
  "'a'\n'b'",
  '+1',
  '--1',
  '0x1F',
  '1_000',
  '1e',
  '1a',
  '$1a',
  '$99999999999',
  'now()',
  '(1)',
  'ARRAY[1]',
  "'x'::text",
  "U&'d\\0061t'",
  "N'x'",
  "B'101'",
  'nullx',
  '1.2.3',
  '.',
  'CURRENT_DATE',
  'NULL::int',
  '1 + 1',
  "'unterminated",
  '-$1',
  '- -1',
  'é',
);
const cell = fc.oneof(
  { weight: 16, arbitrary: number },
  { weight: 16, arbitrary: stringLit },
  { weight: 8, arbitrary: word },
  { weight: 4, arbitrary: param },
  { weight: 1, arbitrary: tricky },
);
const simpleCell = fc.oneof(number, stringLit, word, param);

function rowsText(cells: fc.Arbitrary<string>, sep: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const row = fc
    .tuple(fc.array(fc.tuple(cells, sep), { minLength: 1, maxLength: 4 }), sep)
    .map(([items, s]) => `(${s}${items.map(([c, t]) => c + t).join(',')})`);
  return fc.tuple(fc.array(fc.tuple(row, sep), { minLength: 1, maxLength: 5 })).map(([rs]) => rs.map(([r, s]) => r + s).join(','));
}

const shortTable = fc.constantFrom('v', 'V', '"V"', 'public.v', '"we""ird"', 'select', '"values"', 't1$');
/** Names past 63 bytes take the general path's placeholders, which move the positions after them: the fast path declines. */
const table = someTricky(shortTable, fc.constantFrom('a'.repeat(70), `"${'b'.repeat(70)}"`, '"é"'));
const columns = someTricky(fc.constantFrom('', ' (id, name)', '(a)', ' ("x y", z)'), fc.constantFrom(' ()', ' (values)', '(values, a)'));
const tail = fc.oneof(
  fc.constantFrom('', ';', ' RETURNING *'),
  fc.constantFrom(
    '',
    ' RETURNING *',
    ' returning id, name AS n',
    ' ON CONFLICT DO NOTHING',
    ' ON CONFLICT (id) DO UPDATE SET name = excluded.name RETURNING $2',
    ';',
    ' ; ',
    '; SELECT 1',
    ' UNION SELECT 1',
    ' ORDER BY 1',
    ' -- c',
    ' LIMIT 1',
    '::int',
    ' RETURNING',
  ),
);
const lead = someTricky(fc.constantFrom('', '  ', '\n'), fc.constantFrom('/* x */ ', 'EXPLAIN ', 'WITH a AS (SELECT 1) '));

function statement(
  cells: fc.Arbitrary<string>,
  sep: fc.Arbitrary<string>,
  tails: fc.Arbitrary<string>,
  tables: fc.Arbitrary<string> = table,
  leads: fc.Arbitrary<string> = lead,
): fc.Arbitrary<string> {
  return fc
    .tuple(leads, randomCase('insert'), sep, randomCase('into'), sep, tables, columns, sep, randomCase('values'), sep, rowsText(cells, sep), tails)
    .map(([l, ins, s1, into, s2, t, cols, s3, values, s4, rows, tl]) => `${l}${ins} ${s1}${into} ${s2}${t}${cols} ${s3}${values}${s4}${rows}${tl}`);
}

describe('fast VALUES scanner = the general parse', () => {
  it('takes plain multi-row VALUES and gives the general statement', () => {
    expect(agrees("INSERT INTO v VALUES (1, 'a', 1.5), (2, 'it''s', -2.5e3), (3, NULL, -7)")).toBe(true);
    expect(agrees('insert into public.v (id, name) values ($1, $2), (DEFAULT, TRUE) returning id, name')).toBe(true);
    expect(agrees("INSERT INTO v VALUES (2147483648, -2147483648, 0007, -0, '\\')  ;  ")).toBe(true);
    expect(agrees('INSERT INTO v VALUES (1) ON CONFLICT (id) DO UPDATE SET name = excluded.name WHERE v.id > $3 RETURNING *')).toBe(true);
    expect(agrees("INSERT INTO v VALUES ('é', 'x') /* c */ RETURNING *")).toBe(true);
  });

  it('declines what it does not scan', () => {
    for (const sql of [
      "INSERT INTO v VALUES (E'x')",
      'INSERT INTO v VALUES (1::int)',
      'INSERT INTO v VALUES (1) UNION SELECT 2',
      'INSERT INTO v VALUES (1); SELECT 1',
      "INSERT INTO v VALUES ('a'\n'b')",
      'INSERT INTO v VALUES /* c */ (1)',
      // The general path's placeholder for a 70-character name moves the positions after it: not the template's.
      `INSERT INTO ${'a'.repeat(70)} VALUES (1), (2)`,
      'INSERT INTO v SELECT 1',
      'EXPLAIN INSERT INTO v VALUES (1)',
      "INSERT INTO v VALUES ('\u0000')",
      'INSERT INTO v VALUES (1) RETURNING',
    ]) {
      expect(fast(sql), sql).toBeNull();
    }
  });

  it('random simple VALUES texts: always taken, always equal', () => {
    fc.assert(
      fc.property(
        statement(simpleCell, space, fc.constantFrom('', ' RETURNING *', ';', ' returning id'), shortTable, fc.constantFrom('', ' ', '\n\t')),
        fc.context(),
        (sql, ctx) => {
          ctx.log(sql);
          const f = fast(sql);
          const g = general(sql);
          // Declined only for a text the general path itself refuses or that is not a plain INSERT (table/columns/lead chosen at random).
          if (f === null) expect(g.ok && isPlainInsert(g.value) && !hasOddString(sql)).toBe(false);
          else agrees(sql);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('random texts with tricky cells, whitespace and tails: equal when taken', () => {
    const RUNS = Number(process.env.FAST_VALUES_RUNS ?? 1500);
    let taken = 0;
    fc.assert(
      fc.property(statement(cell, anySpace, tail), (sql) => {
        if (agrees(sql)) taken++;
      }),
      { numRuns: RUNS },
    );
    // Not vacuous: a good share of the random texts went the fast way.
    expect(taken).toBeGreaterThan(RUNS / 20);
  });

  it('a long tail (not kept as a template) parses the same, every time', () => {
    const returning = Array.from({ length: 600 }, (_, i) => `id + ${i} AS c${i}`).join(', ');
    for (const rows of ['(1, 2)', "(3, 'x'), (4, NULL)"]) expect(agrees(`INSERT INTO v VALUES ${rows} RETURNING ${returning}`)).toBe(true);
  });

  it('parseSql uses it: a 1,000-row VALUES parses to the general statement', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => `(${i}, 'name-${i}', ${i * 1.5})`).join(', ');
    const sql = `INSERT INTO v VALUES ${rows} RETURNING id`;
    expect(parseSql(sql)).toStrictEqual(parseGeneral(sql));
    expect(fast(sql)).not.toBeNull();
  });
});

function isPlainInsert(value: unknown): boolean {
  const stmts = value as { explain: unknown; body: { kind: string; source: { kind: string } | null } }[];
  return stmts.length === 1 && stmts[0]!.explain === null && stmts[0]!.body.kind === 'insert' && stmts[0]!.body.source?.kind === 'values';
}

/**
 * Left to the general path by design: a NUL or a lone surrogate in a string, and non-ASCII rows before
 * a ';' (libpg-query's statement length counts bytes, so its text would end elsewhere).
 */
function hasOddString(sql: string): boolean {
  return sql.includes('\u0000') || /[\ud800-\udfff]/.test(sql) || ([...sql].some((c) => c.charCodeAt(0) > 127) && sql.includes(';'));
}

/**
 * Binding: the same rows and the same errors through the engine, for a statement the fast path
 * takes and the same statement with a comment after its last literal (which sends it the general way).
 */
describe('fast VALUES scanner: the engine binds as for the general parse', () => {
  it('rows and errors are the same', async () => {
    const h = await openSql();
    try {
      await h.q(
        "CREATE TABLE f (id INT PRIMARY KEY, s SMALLINT, b BIGINT, n NUMERIC(6,2), d DOUBLE PRECISION, t TEXT, ok BOOLEAN, vc VARCHAR(3) DEFAULT 'd', a INT[], j JSONB)",
      );
      const cases = [
        "(20, '7', '8', '9.125', '1e3', 'x', 'yes', 'abc', '{1,2}', '{\"k\": [1]}'), (21, 1, 1, 1, 1, NULL, NULL, NULL, NULL, NULL)",
        "(22, 1, 1, 1, 1, 'x', true, 'abcd')",
        "(23, 1, 1, 1, 1, 'x', true, 'ab', '{1,x}')",
        "(24, 1, 1, 1, 1, 'x', true, 'ab', '{}', '{bad')",
        "(25, 1, 1, 1, 1, 'x', true, true)",
        '(26, 1, 1, 1, 1, true, 1.5, DEFAULT)',
        "(27, 'x', 1, 1, 1, 'x', true)",
        "(1, 1, 1, 1.5, 1.5, 'a', true), (2, -32768, 9223372036854775807, -9999.99, 1e300, 'it''s', FALSE)",
        "(3, NULL, NULL, NULL, NULL, NULL, NULL), (4, DEFAULT, -9223372036854775808, 0.005, -0, '', 't')",
        "(5, '1.5', 1, 1, 1, 'x', true)",
        '(6, 32768, 1, 1, 1, 1, true)',
        '(7, 1, 9223372036854775808, 1, 1, 1, true)',
        '(8, 1, 1, 10000, 1, 1, true)',
        '(9, 1, 1, 1, 1, 1, 1)',
        "(10, 1, 1, 1, 1, 'x', 'maybe')",
        '(11, 1, 1, 1, 1)',
        '(12, 1, 1, 1, 1, 1, true, 8)',
        '(2147483648, 1, 1, 1, 1, 1, true)',
        "(13, 1, 1, 1, 1e400, 'x', true)",
        '(14, 1, 1, 1, 1, 1, true), (14, 2, 2, 2, 2, 2, false)',
      ];
      for (const [i, rows] of cases.entries()) {
        const sql = `INSERT INTO f VALUES ${rows} RETURNING *`;
        expect(fast(sql), sql).not.toBeNull();
        const viaFast = await outcome(h.q(sql));
        await outcome(h.q(`DELETE FROM f WHERE id >= 0 OR id < 0`));
        // A comment after the last literal sends it the general way, every literal at the same position.
        const general = `INSERT INTO f VALUES ${rows.slice(0, -1)}/* ${i} */) RETURNING *`;
        expect(fast(general), general).toBeNull();
        const viaGeneral = await outcome(h.q(general));
        await outcome(h.q(`DELETE FROM f WHERE id >= 0 OR id < 0`));
        expect(viaFast, sql).toStrictEqual(viaGeneral);
      }
      const columnsMissing = await outcome(h.q('INSERT INTO f (id, nope) VALUES (1, 2), (3, 4)'));
      expect(columnsMissing).toMatchObject({ ok: false, code: 'COLUMN_NOT_FOUND' });
      // A bulk text (longer than the parse cache keeps) is not kept as a prepared binding; a short one still is.
      const binds = h.engine.insertCacheStats().binds;
      const many = Array.from({ length: 400 }, (_, i) => `(${1000 + i}, 1, 2, 3.5, 4.5, 'name-${i}', true)`).join(', ');
      expect((await h.q(`INSERT INTO f VALUES ${many}`)).affectedRows).toBe(400);
      expect(h.engine.insertCacheStats().binds).toBe(binds);
      expect(await h.rows('SELECT count(*)::int AS n, sum(b)::int AS b FROM f WHERE id >= 1000')).toEqual([{ n: 400, b: 800 }]);
      await h.q("INSERT INTO f VALUES (1, 1, 1, 1, 1, 'x', true), (2, 1, 1, 1, 1, 'y', false)");
      expect(h.engine.insertCacheStats().binds).toBe(binds + 1);
    } finally {
      await h.close();
    }
  });
});

async function outcome(run: Promise<{ rows: unknown[]; affectedRows: number | null }>): Promise<unknown> {
  try {
    const r = await run;
    return { ok: true, rows: r.rows, affected: r.affectedRows };
  } catch (error) {
    const e = error as { code: string; message: string; details: unknown };
    return { ok: false, code: e.code, message: e.message, details: e.details };
  }
}
