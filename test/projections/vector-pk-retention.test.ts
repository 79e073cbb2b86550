/**
 * The vector index's label map must not keep a row's log record alive: decodeLogRecord's keys are
 * views of one copy of the whole record payload (row images and vectors included), so a pk kept
 * as given would pin the ~540 KB payload of a 1,000-row INSERT of 128-dim vectors for as long as
 * one of its rows stays indexed (found by the sixth session's review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from '../query/helpers.js';

let sql: SqlHarness | null = null;
afterEach(async () => {
  await sql?.close();
  sql = null;
});

describe('vector index keys', () => {
  it('a pk in the label map holds its own bytes, not its whole decoded record', async () => {
    sql = await openSql();
    await sql.q('CREATE TABLE items (id BIGINT PRIMARY KEY, emb VECTOR(128))');
    await sql.q('CREATE INDEX items_emb ON items USING hnsw (emb) WITH (m = 16, ef_construction = 64)');
    const vector = `'[${Array.from({ length: 128 }, (_, i) => i % 7).join(',')}]'`;
    await sql.q(`INSERT INTO items VALUES ${Array.from({ length: 1000 }, (_, i) => `(${i}, ${vector})`).join(',')}`);
    await sql.q('DELETE FROM items WHERE id > 0'); // one row of the 1,000 left
    await sql.stack.projections.readBarrier.wait(); // answered once durable: applied after
    const table = [...sql.stack.projections.catalog.tables()].find((t) => t.def.name === 'items')!.def;
    const indexId = table.indexes.find((i) => i.name === 'items_emb')!.id;
    const index = sql.stack.projections.vectors.index(indexId) as unknown as { pkOfLabel: Map<number, Uint8Array> };
    const pks = [...index.pkOfLabel.values()];
    expect(pks.length).toBe(1);
    expect(pks[0]!.byteLength).toBeLessThan(16);
    expect(pks[0]!.buffer.byteLength).toBeLessThan(1000);
  }, 60_000);
});
