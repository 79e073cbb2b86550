import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMA, DEFAULT_TENANT } from '../../core/catalog.js';
import { silentLogger } from '../../core/logger.js';
import { stringBytes } from '../../projections/index.js';
import { SqlEngine, typeSystem } from '../../query/index.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

/**
 * The point-read cache counts an answer text it keeps by the bytes V8 keeps it in: a text with a
 * character past U+00FF is a two-byte string (found by the ninth session's review: 'ж' texts held
 * twice what was counted against pointCacheBytesMax).
 */
describe('point-read cache: kept answer texts counted by their bytes', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  let stack: Stack;
  let engine: SqlEngine;
  const options = { tenant: DEFAULT_TENANT, timeoutMs: 60_000, maxRows: 10 };
  const sql = (text: string, params: unknown[] = []) => engine.execute(text, { ...options, params });
  const store = () => (stack.projections as unknown as { store: { rowCacheSize(): { bytes: number } } }).store;
  const WIDE = 'ж'.repeat(4000);
  const NARROW = 'é'.repeat(4000); // U+00E9: still one byte a character in V8

  beforeAll(async () => {
    dir = await tempDir('svcdb-point-cache-bytes-');
    stack = await openStack(dir.dir);
    engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
    await sql('CREATE TABLE w (id BIGINT PRIMARY KEY, s TEXT)');
    await sql('INSERT INTO w VALUES (1, $1), (2, $2), (3, $1), (4, $2)', [WIDE, NARROW]);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await dir?.remove();
  });

  it('stringBytes: one byte a character up to U+00FF, two past it', () => {
    expect(stringBytes('')).toBe(0);
    expect(stringBytes('abc')).toBe(3);
    expect(stringBytes(NARROW)).toBe(4000);
    expect(stringBytes('\u00ff')).toBe(1);
    expect(stringBytes('\u0100')).toBe(2);
    expect(stringBytes(WIDE + 'abc')).toBe(8006);
    expect(stringBytes('😀')).toBe(4); // a surrogate pair: two UTF-16 units
  });

  it('GET row (readTextByKey): a two-byte text counts twice its length', async () => {
    const def = stack.projections.catalog.tableByName(DEFAULT_TENANT, DEFAULT_SCHEMA, 'w')!.def;
    const columns = def.columns.map((c) => c.name);
    const toText = (row: Record<string, unknown>): string => `{"data":${JSON.stringify(row)}}`;
    const grown = async (id: number): Promise<{ counted: number; text: string }> => {
      await engine.readByKey({ table: def, key: [String(id)], columns }); // the image cached first
      const before = store().rowCacheSize().bytes;
      const text = (await engine.readTextByKey({ table: def, key: [String(id)], columns }, toText)) as string;
      return { counted: store().rowCacheSize().bytes - before, text };
    };
    const wide = await grown(1);
    expect(wide.text).toContain(WIDE);
    expect(wide.counted).toBeGreaterThanOrEqual(2 * wide.text.length);
    const narrow = await grown(2);
    expect(narrow.counted).toBeGreaterThanOrEqual(narrow.text.length);
    expect(narrow.counted).toBeLessThan(2 * narrow.text.length);
  });

  it('GET row then the point SELECT of the same row: each answer and the row, once asked for, counted by their bytes', async () => {
    const def = stack.projections.catalog.tableByName(DEFAULT_TENANT, DEFAULT_SCHEMA, 'w')!.def;
    const columns = def.columns.map((c) => c.name);
    const toText = (row: Record<string, unknown>): string => JSON.stringify(row);
    const wrap = Object.freeze({ before: '{"data":', after: '}' });
    const frame = Object.freeze({ before: '{"success":true,"data":', after: '}' });
    const q = 'SELECT * FROM w WHERE id = $1';
    await sql('INSERT INTO w VALUES (5, $1), (6, $2)', [WIDE, NARROW]); // rows no other test read
    await sql(q, [1]); // the plan cached
    const both = async (id: number): Promise<{ get: number; text: number; rows: number; answer: string }> => {
      await engine.readByKey({ table: def, key: [String(id)], columns }); // the image cached first
      const before = store().rowCacheSize().bytes;
      await engine.readTextByKey({ table: def, key: [String(id)], columns }, toText, wrap);
      const afterGet = store().rowCacheSize().bytes;
      // POST /query without metadata: the answer's text alone (the row is not made for it).
      const answer = engine.pointSelectText(q, { ...options, params: [id] }, toText, frame)!;
      const afterText = store().rowCacheSize().bytes;
      // A caller that wants the rows: the frozen row is made and kept once, the answer is the same.
      expect(engine.pointSelect(q, { ...options, params: [id] }, toText, frame)!.rowsText).toBe(answer);
      const afterRows = store().rowCacheSize().bytes;
      return { get: afterGet - before, text: afterText - afterGet, rows: afterRows - afterText, answer };
    };
    // GET kept its answer alone; the text adds its own answer; the rows add the row (about the text again), no more.
    const wide = await both(5);
    expect(wide.answer).toBe(`{"success":true,"data":[{"id":5,"s":"${WIDE}"}]}`);
    for (const counted of [wide.get, wide.text, wide.rows]) {
      expect(counted).toBeGreaterThanOrEqual(2 * wide.answer.length - 40);
      expect(counted).toBeLessThan(3 * wide.answer.length);
    }
    const narrow = await both(6);
    expect(narrow.answer).toBe(`{"success":true,"data":[{"id":6,"s":"${NARROW}"}]}`);
    for (const counted of [narrow.get, narrow.text, narrow.rows]) {
      expect(counted).toBeGreaterThanOrEqual(narrow.answer.length - 40);
      expect(counted).toBeLessThan(2 * narrow.answer.length);
    }
  });

  it('POST /query point SELECT (pointSelect with a frame): the text and its frozen row count twice its bytes', async () => {
    const q = 'SELECT * FROM w WHERE id = $1';
    const frame = Object.freeze({ before: '{"success":true,"data":', after: '}' });
    const toText = (row: Record<string, unknown>): string => JSON.stringify(row);
    await sql(q, [3]); // the plan cached
    await sql(q, [4]);
    const counted = (id: number): { bytes: number; text: string } => {
      const before = store().rowCacheSize().bytes;
      const result = engine.pointSelect(q, { ...options, params: [id] }, toText, frame);
      expect(result?.rows.length).toBe(1);
      return { bytes: store().rowCacheSize().bytes - before, text: result!.rowsText! };
    };
    const wide = counted(3);
    expect(wide.bytes).toBeGreaterThanOrEqual(4 * wide.text.length);
    const narrow = counted(4);
    expect(narrow.bytes).toBeGreaterThanOrEqual(2 * narrow.text.length);
    expect(narrow.bytes).toBeLessThan(4 * narrow.text.length);
  });
});
