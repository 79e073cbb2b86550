/**
 * Differential tests against PostgreSQL (PGlite, started once for the file): each expression's
 * ::text and pg_typeof must match ours, or both must fail; aggregates over VALUES lists likewise.
 * Known, documented differences (docs/sql-types.md) are asserted in type-system.test.ts instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diffAggregates } from './aggregates-oracle.js';
import { diff, diffTypes, startOracle, type Oracle } from './pg-oracle.js';
import { AGGREGATES, FLOAT, INTEGER, NUMERIC, TEXT_BOOL } from './tables-scalars.js';
import { ARRAYS, DATETIME, INTERVAL, JSONB, UUID_CASTS } from './tables-structured.js';

let pg: Oracle;
beforeAll(async () => { pg = await startOracle(); }, 60_000);
afterAll(async () => { await pg.close(); });

describe('differential against PostgreSQL', () => {
  it('integers, booleans and their errors', async () => { expect(await diff(pg, INTEGER)).toEqual([]); });
  it('numeric: exact arithmetic, scales, rounding, typmods, transcendental functions', async () => { expect(await diff(pg, NUMERIC)).toEqual([]); });
  it('floats: shortest output, specials, overflow, rounding', async () => { expect(await diff(pg, FLOAT)).toEqual([]); });
  it('text functions, LIKE, regular expressions, booleans', async () => { expect(await diff(pg, TEXT_BOOL)).toEqual([]); });
  it('dates and timestamps: I/O, arithmetic, date_trunc, extract, age', async () => { expect(await diff(pg, DATETIME)).toEqual([]); });
  it('intervals: input forms, output style, arithmetic, comparison', async () => { expect(await diff(pg, INTERVAL)).toEqual([]); });
  it('jsonb: output, operators, functions, ordering, casts', async () => { expect(await diff(pg, JSONB)).toEqual([]); });
  it('arrays: I/O, operators, functions', async () => { expect(await diff(pg, ARRAYS)).toEqual([]); });
  it('uuid, casts and operator resolution', async () => { expect(await diff(pg, UUID_CASTS)).toEqual([]); });
  it('aggregates: result types, scales, NULL handling, DISTINCT', async () => { expect(await diffAggregates(pg, AGGREGATES)).toEqual([]); });
  it('result types match pg_typeof', async () => {
    const all = [...INTEGER, ...NUMERIC, ...FLOAT, ...TEXT_BOOL, ...DATETIME, ...INTERVAL, ...JSONB, ...ARRAYS, ...UUID_CASTS];
    expect(await diffTypes(pg, all)).toEqual([]);
  });
});
