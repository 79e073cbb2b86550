/**
 * Differential tests against PostgreSQL (PGlite, started once for the file), through the real SQL
 * engine: each expression runs as `SELECT (expr)::text` and `SELECT pg_typeof(expr)::text` on both;
 * the texts must match, or both must fail with the same message. Aggregates run over VALUES lists.
 * Known, documented differences (docs/sql-types.md) are asserted in type-system.test.ts instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateSql } from './aggregates-oracle.js';
import { diff, diffStatements, diffTypes, startEngine, startOracle, type Answerer } from './pg-oracle.js';
import { AGGREGATES, FLOAT, GRAMMAR, INTEGER, NUMERIC, TEXT_BOOL } from './tables-scalars.js';
import { ARRAYS, DATETIME, INTERVAL, JSONB, UUID_CASTS } from './tables-structured.js';

let pg: Answerer;
let engine: Answerer;
beforeAll(async () => {
  [pg, engine] = await Promise.all([startOracle(), startEngine()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([pg?.close(), engine?.close()]);
});

describe('differential against PostgreSQL, through the engine', () => {
  it('integers, booleans and their errors', async () => {
    expect(await diff(pg, engine, INTEGER)).toEqual([]);
  });
  it('numeric: exact arithmetic, scales, rounding, typmods, transcendental functions', async () => {
    expect(await diff(pg, engine, NUMERIC)).toEqual([]);
  });
  it('floats: shortest output, specials, overflow, rounding', async () => {
    expect(await diff(pg, engine, FLOAT)).toEqual([]);
  });
  it('text functions, LIKE, regular expressions, booleans', async () => {
    expect(await diff(pg, engine, TEXT_BOOL)).toEqual([]);
  });
  it('dates and timestamps: I/O, arithmetic, date_trunc, extract, age', async () => {
    expect(await diff(pg, engine, DATETIME)).toEqual([]);
  });
  it('intervals: input forms, output style, arithmetic, comparison', async () => {
    expect(await diff(pg, engine, INTERVAL)).toEqual([]);
  });
  it('jsonb: output, operators, functions, ordering, casts', async () => {
    expect(await diff(pg, engine, JSONB)).toEqual([]);
  });
  it('arrays: I/O, operators, functions', async () => {
    expect(await diff(pg, engine, ARRAYS)).toEqual([]);
  });
  it('uuid, casts and operator resolution', async () => {
    expect(await diff(pg, engine, UUID_CASTS)).toEqual([]);
  });
  it('grammar: constant folding of signs, prefix operators, EXTRACT fields, type modifiers', async () => {
    expect(await diff(pg, engine, GRAMMAR)).toEqual([]);
  });
  it('aggregates: result types, scales, NULL handling, DISTINCT', async () => {
    expect(await diffStatements(pg, engine, AGGREGATES.map(aggregateSql))).toEqual([]);
  });
  it('result types match pg_typeof', async () => {
    const all = [...INTEGER, ...NUMERIC, ...FLOAT, ...TEXT_BOOL, ...DATETIME, ...INTERVAL, ...JSONB, ...ARRAYS, ...UUID_CASTS, ...GRAMMAR];
    expect(await diffTypes(pg, engine, all)).toEqual([]);
  });
});
