/**
 * TEST ONLY: run by osr-loops.test.ts as `node --trace-deopt-verbose --no-concurrent-osr
 * dist/test/projections/osr-loops-child.js`; V8 prints every deoptimization on stdout. Long row
 * records first (V8 compiles the loops of their first calls on the stack, OSR), then many short
 * ones: through the log's encoding, then a real server in this process driven over HTTP as the
 * hot-paths bench drives one.
 */
import { encodeLogRecord, type TxnOp } from '../../core/log-records.js';
import { startTestServer } from '../helpers/sql-server.js';
import { itemsTable, rowChange, txn } from '../helpers/stack.js';

/** Single-row inserts of each kind after the long records: each deoptimized three times or more before the fix. */
export const SHORT_REQUESTS = 50;
/** 100-row POSTs after them (a read of their primary keys in one getMany each). */
export const MULTI_ROW_REQUESTS = 20;

// The log's encoding first, called as the sequencer calls it (its first call in this process is the
// long one): through the server below it sees a long record first only in some runs.
const items = itemsTable(1);
let item = 0n;
const insert = (): TxnOp => rowChange(items, 'insert', null, { id: ++item, name: `name-${item}`, score: 1 });
encodeLogRecord(txn(Array.from({ length: 10_000 }, insert)));
for (let i = 0; i < 2 * SHORT_REQUESTS; i++) encodeLogRecord(txn([insert()]));

const server = await startTestServer();
const headers = { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' };
const post = async (path: string, body: unknown): Promise<void> => {
  const response = await fetch(`${server.baseUrl}/api/v1${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  await response.arrayBuffer();
};
/** `count` calls of `request`, ten in flight at a time. */
async function inTens(count: number, request: () => Promise<void>): Promise<void> {
  for (let sent = 0; sent < count; sent += 10) await Promise.all(Array.from({ length: Math.min(10, count - sent) }, request));
}
const row = (id: number): Record<string, unknown> => ({ id, name: `name-${id}`, amount: id * 1.5 });
try {
  for (const name of ['t', 'u'])
    await post('/query', { sql: `CREATE TABLE ${name} (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)` });
  let id = 0;
  // The server's first row record: a 10,000-row POST (a bulk load).
  await post('/tables/t/rows', { rows: Array.from({ length: 10_000 }, () => row(++id)) });
  // Then 10,000-row statements whose rows come from a query (the bench's load).
  for (let i = 0; i < 2; i++) {
    await post('/query', { sql: `INSERT INTO u SELECT g, 'name-' || g, g * 1.5 FROM generate_series(${id + 1}, ${id + 10_000}) g` });
    id += 10_000;
  }
  // Ten at a time, as concurrent clients send them: a record each, an fdatasync per ten or so.
  await inTens(SHORT_REQUESTS, () => post('/tables/t/rows', { row: row(++id) }));
  await inTens(SHORT_REQUESTS, () => {
    const next = ++id;
    return post('/query', { sql: 'INSERT INTO t (id, name, amount) VALUES ($1, $2, $3)', params: [next, `name-${next}`, next * 1.5] });
  });
  await inTens(MULTI_ROW_REQUESTS, () => post('/tables/t/rows', { rows: Array.from({ length: 100 }, () => row(++id)) }));
} finally {
  await server.close();
}
