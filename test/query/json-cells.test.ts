import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { typeSystem, type QueryResult } from '../../query/index.js';
import { openSql, type SqlHarness } from './helpers.js';

/**
 * JSON rows convert their usual values for bigint, double precision, text, integer and boolean
 * without the type system (insert-json.ts plainCell); every cell must still be what
 * types.fromJson makes of it ($n parameters convert the same way), or its error. Each value of a
 * pool goes into each column twice: as a JSON row, and as a $n parameter into a twin table; the
 * rows read back (and the errors) must match.
 */
describe('JSON rows convert each cell as types.fromJson does', () => {
  let h: SqlHarness;
  const columns = ['i8 BIGINT', 'f8 DOUBLE PRECISION', 't TEXT', 'i4 INTEGER', 'b BOOLEAN', 's2 SMALLINT', 'v VARCHAR(3)'];
  const pool: unknown[] = [
    0,
    -0,
    1,
    -1,
    1.5,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31),
    -(2 ** 31) - 1,
    2 ** 53 - 1,
    2 ** 53,
    -(2 ** 53),
    1e300,
    'abc',
    '',
    '123',
    ' 7 ',
    '1.5',
    'true',
    'f',
    '9223372036854775807',
    '9223372036854775808',
    true,
    false,
    null,
    { a: 1 },
    [1, 2],
  ];
  const options = { params: [], timeoutMs: 30_000, maxRows: 10_000, tenant: 'default' };
  const outcome = async (run: () => Promise<QueryResult>): Promise<string> => {
    try {
      await run();
      return 'ok';
    } catch (e) {
      const err = e as { code: string; message: string };
      return `${err.code}: ${err.message}`;
    }
  };

  beforeAll(async () => {
    h = await openSql();
    const defs = columns.join(', ');
    await h.q(`CREATE TABLE cj (id BIGINT PRIMARY KEY, ${defs})`);
    await h.q(`CREATE TABLE cs (id BIGINT PRIMARY KEY, ${defs})`);
  });
  afterAll(async () => {
    await h.close();
  });

  it('every pool value in every column: the same stored value or the same error as a parameter', async () => {
    let id = 0;
    for (const def of columns) {
      const name = def.split(' ')[0]!;
      for (const value of pool) {
        id += 1;
        const viaJson = await outcome(() =>
          h.engine.insertJson({ schema: null, table: 'cj', rows: [{ id, [name]: value }], returning: [], onConflict: null }, options),
        );
        const viaParam = await outcome(() => h.q(`INSERT INTO cs (id, ${name}) VALUES ($1, $2)`, [id, value]));
        const label = `${name} <- ${JSON.stringify(value)}`;
        // The JSON path names the column and row in its message; the rest is the conversion's own.
        expect(viaJson.replace(/ \(column "\w+", row 0\)$/, ''), label).toBe(viaParam);
        if (viaJson === 'ok') {
          const [stored] = await h.rows(`SELECT ${name} FROM cj WHERE id = $1`, [id]);
          const [expected] = await h.rows(`SELECT ${name} FROM cs WHERE id = $1`, [id]);
          expect(stored, label).toEqual(expected);
        }
      }
    }
  });

  it('a bulk request of mixed cells stores what fromJson makes of each', async () => {
    const rows = Array.from({ length: 1200 }, (_, r) => ({
      id: 10_000 + r,
      i8: r % 3 === 0 ? String(r) : r,
      f8: r % 4 === 0 ? `${r}.25` : r / 4,
      t: `t${r}`,
      i4: 0 - r,
      b: r % 2 === 0,
    }));
    await h.engine.insertJson({ schema: null, table: 'cj', rows, returning: [], onConflict: null }, options);
    const back = await h.rows('SELECT id, i8, f8, t, i4, b FROM cj WHERE id >= 10000 ORDER BY id');
    expect(back).toHaveLength(rows.length);
    const text = (type: { name: string }, json: unknown): unknown => typeSystem.toJson(type as never, typeSystem.fromJson(type as never, json));
    for (let r = 0; r < rows.length; r += 97) {
      const row = rows[r]!;
      expect(back[r]).toEqual({
        id: text({ name: 'int8' }, row.id),
        i8: text({ name: 'int8' }, row.i8),
        f8: text({ name: 'float8' }, row.f8),
        t: row.t,
        i4: row.i4,
        b: row.b,
      });
    }
  });
});
