import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

/**
 * What the everyday functions refuse rather than answer differently from PostgreSQL (their
 * answers are in test/sql/everyday-functions.slt and select-list-srf.slt, checked against it),
 * and svcdb's own values of version() and current_setting().
 */
describe('everyday functions: svcdb values and refusals', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(async () => {
    await h.close();
  });

  it('answers version() and the settings clients ask for with svcdb values', async () => {
    const [row] = await h.rows("SELECT version() AS v, current_setting('server_version') AS s, current_setting('search_path') AS p");
    expect(row).toEqual({ v: expect.stringMatching(/^PostgreSQL 15\.0 \(svcdb \d+\.\d+\.\d+\)$/), s: '15.0', p: '"$user", public' });
    expect(await caught(h.q("SELECT current_setting('nope')"))).toMatchObject({ code: 'INVALID_QUERY', details: { sqlstate: '42704' } });
  });

  it('refuses what it would print differently: floats, PR/PL/EEEE, NaN, other date patterns, regexp options', async () => {
    for (const sql of [
      // floats print now (everyday-functions.slt); NaN and Infinity do not
      "SELECT to_char('NaN'::float8, '999')",
      "SELECT to_char('Infinity'::float4, '999')",
      "SELECT to_char(42, '999PR')",
      "SELECT to_char(42, 'PL999')",
      "SELECT to_char(42, '9.99EEEE')",
      "SELECT to_char('NaN'::numeric, '999')",
      "SELECT to_date('2024-10', 'IYYY-IW')",
      "SELECT to_timestamp('2024 5', 'YYYY J')",
      // x (expanded syntax) is supported since the ARE translator (query/functions/regex-translate.ts); b and e are not
      "SELECT regexp_matches('a', 'a', 'b')",
      "SELECT regexp_replace('a', 'a', 'X', 'e')",
      "SELECT substring('abc' similar '%#\"b#\"%' escape '#')",
    ]) {
      expect(await caught(h.q(sql)), sql).toMatchObject({ code: 'INVALID_QUERY', details: { reason: 'unsupported' } });
    }
  });
});
