/**
 * A scan-cache row inserted by a large record must not keep that record's buffer of all row keys
 * alive (projections/row-ops.ts: every row key of a record is a view of one buffer): one surviving
 * row of a 10,000-row INSERT would pin 140,000 bytes instead of its 9 (found by the sixth
 * session's review).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from '../query/helpers.js';

let sql: SqlHarness | null = null;
afterEach(async () => {
  await sql?.close();
  sql = null;
});

/** Every pk the engine's scan cache holds (its private entries, read for the proof). */
function cachedPks(harness: SqlHarness): Uint8Array[] {
  type Entries = Map<number, { current: { rows: { chunks: { pks: Uint8Array[] }[] } } | null }>;
  const cache = (harness.engine as unknown as { scanCache: { entries: Entries } }).scanCache;
  const out: Uint8Array[] = [];
  for (const entry of cache.entries.values()) for (const chunk of entry.current?.rows.chunks ?? []) out.push(...chunk.pks);
  return out;
}

describe('scan cache keys', () => {
  it('one row left of a 10,000-row insert holds its own key bytes, not the buffer of all 10,000 row keys', async () => {
    sql = await openSql();
    await sql.q('CREATE TABLE t (id BIGINT PRIMARY KEY, v INT)');
    // Enough rows for the cache to follow a 10,000-op write (its budget is max(4096, cached rows)).
    await sql.q(`INSERT INTO t VALUES ${Array.from({ length: 12_000 }, (_, i) => `(${i}, 0)`).join(',')}`);
    await sql.q('SELECT count(*) FROM t WHERE v >= 0'); // a full scan fills the cache
    await sql.q(`INSERT INTO t VALUES ${Array.from({ length: 10_000 }, (_, i) => `(${100_000 + i}, 1)`).join(',')}`);
    await sql.q('SELECT count(*) FROM t WHERE v >= 0'); // the cache follows the bulk insert
    for (let from = 100_001; from < 110_000; from += 1000) {
      await sql.q(`DELETE FROM t WHERE id >= ${from} AND id < ${from + 1000}`); // only id 100000 of the bulk rows stays
      await sql.q('SELECT count(*) FROM t WHERE v >= 0');
    }
    expect(sql.engine.scanCacheStats().fills).toBe(1); // followed, never refilled from LevelDB
    const largest = Math.max(...cachedPks(sql).map((pk) => pk.buffer.byteLength));
    expect(largest).toBeLessThan(1000); // a 9-byte key should not hold 140 KB
  }, 60_000);
});
