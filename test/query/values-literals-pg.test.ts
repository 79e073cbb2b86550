import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PARSE_CACHE_TEXT_CHARS_MAX } from '../../query/parse-cache.js';
import { openSql, type SqlHarness } from './helpers.js';
import { openPg } from './pg-oracle.js';

/**
 * Number literals (and quoted number texts) in a VALUES list into number columns, through the kept binding (a short
 * text) and through the path for texts past the parse cache's length, against PostgreSQL (PGlite). Quoted '0x1F' and
 * '1_000' are left out: PostgreSQL 16+ reads them as integers, 15 (which svcdb follows: docs/sql-types.md) refuses them.
 */
const LITERALS = [
  '1e400',
  '-0',
  '-0.0',
  '0.0',
  '.5',
  '5.',
  '1_000',
  '0x1F',
  '0o17',
  '0b101',
  '+5',
  '- 5',
  '007',
  '1e3',
  '1.5e-3',
  '123456789012345',
  '1234567890123456',
  '999999999999999.999999999999999',
  '0.000000000000001',
  '32768',
  '-32768',
  '2147483648',
  '-2147483648',
  '9223372036854775808',
  '-9223372036854775808',
  '-1',
  '-2147483649',
  '-123456789012345',
  '-1234567890123456',
  '-4.35',
  '-0.1',
  '-00.5',
  '-123456789012345.5',
  '-999999999999999.999999999999999',
  '1.0000000000000001',
  '0.1',
  '4.35',
  '1e-400',
  '100000000000000000000000000000000000000000',
  "'1e400'",
  "'-0'",
  "'  5  '",
  "'+5'",
  "'.5'",
  "'5.'",
  "'NaN'",
  "'-Infinity'",
  "'1e-400'",
  "' 1.5 '",
  "'3.4e39'",
  "'1e-46'",
];
const TYPES = ['int2', 'int4', 'int8', 'float4', 'float8', 'numeric'];

describe('number literals in VALUES against PostgreSQL', () => {
  let sql: SqlHarness;
  let pg: PGlite;
  beforeAll(async () => {
    sql = await openSql();
    pg = await openPg();
    for (const t of TYPES) {
      await pg.query(`CREATE TABLE l_${t} (id INTEGER PRIMARY KEY, c ${t})`);
      await sql.q(`CREATE TABLE l_${t} (id INTEGER PRIMARY KEY, c ${t})`);
    }
  });
  afterAll(async () => {
    await sql.close();
    await pg.close();
  });
  it('same value text or both fail', async () => {
    const diffs: string[] = [];
    let id = 0;
    for (const t of TYPES) {
      for (const lit of LITERALS) {
        for (const long of [false, true]) {
          id += 1;
          const pad = long ? ' '.repeat(PARSE_CACHE_TEXT_CHARS_MAX + 10) : '';
          const text = `INSERT INTO l_${t} ${pad}VALUES (${id}, ${lit})`;
          let want: string;
          try {
            await pg.query(text);
            want = String((await pg.query<{ c: string }>(`SELECT c::text AS c FROM l_${t} WHERE id = ${id}`)).rows[0]!.c);
          } catch {
            want = 'ERROR';
          }
          let got: string;
          try {
            await sql.q(text);
            got = String((await sql.rows(`SELECT c::text AS c FROM l_${t} WHERE id = ${id}`))[0]!.c);
          } catch {
            got = `ERROR`;
          }
          if (got !== want) diffs.push(`${t} ${lit} ${long ? 'long' : 'short'}: pg ${want} svcdb ${got}`);
        }
      }
    }
    expect(diffs).toEqual([]);
  }, 120_000);
});
