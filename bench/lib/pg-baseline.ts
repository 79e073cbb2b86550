/**
 * The hot-paths baseline server (bench/hot-paths.ts): what a fastify + pg user writes in front of
 * PostgreSQL, in its own process. A pg.Pool of POOL_SIZE connections over TCP; every write is one
 * autocommit statement, so its answer waits for PostgreSQL's commit (synchronous_commit on).
 *
 *   GET  /tables/:t/rows/:id   SELECT by primary key (404 when absent)
 *   POST /query                {sql, params}: the statement as given, answers {rows}
 *   POST /tables/:t/rows       {row}: one INSERT ... RETURNING *, 201
 *   POST /tables/:t/bulk       {rows}: one INSERT ... SELECT FROM unnest($1::bigint[], ...) per request, 201
 *
 * Tables: t, ins and bulk (id, name, amount) and s (id, n) — the bench creates them.
 * Usage: node pg-baseline.js PORT PG_HOST PG_PORT PG_USER
 */
import Fastify from 'fastify';
import pg from 'pg';

const POOL_SIZE = 16;
const [port, pgHost, pgPort, pgUser] = process.argv.slice(2);
const pool = new pg.Pool({ host: pgHost, port: Number(pgPort), user: pgUser, database: 'postgres', max: POOL_SIZE });

/** Per table: the column list, and the unnest() cast list for bulk inserts (parameters as arrays). */
const TABLES: Record<string, { columns: string[]; arrayTypes: string[] }> = {
  t: { columns: ['id', 'name', 'amount'], arrayTypes: ['bigint[]', 'text[]', 'float8[]'] },
  ins: { columns: ['id', 'name', 'amount'], arrayTypes: ['bigint[]', 'text[]', 'float8[]'] },
  bulk: { columns: ['id', 'name', 'amount'], arrayTypes: ['bigint[]', 'text[]', 'float8[]'] },
  s: { columns: ['id', 'n'], arrayTypes: ['bigint[]', 'int[]'] },
};

function table(name: string): { columns: string[]; arrayTypes: string[] } {
  const found = TABLES[name];
  if (!found) throw Object.assign(new Error(`no table ${name}`), { statusCode: 404 });
  return found;
}

const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true }));
app.get<{ Params: { t: string; id: string } }>('/tables/:t/rows/:id', async (request, reply) => {
  table(request.params.t);
  const result = await pool.query(`SELECT * FROM ${request.params.t} WHERE id = $1`, [request.params.id]);
  if (result.rows.length === 0) return reply.code(404).send({ error: 'not found' });
  return { row: result.rows[0] };
});
app.post<{ Body: { sql: string; params?: unknown[] } }>('/query', async (request) => {
  const result = await pool.query(request.body.sql, request.body.params ?? []);
  return { rows: result.rows };
});
app.post<{ Params: { t: string }; Body: { row: Record<string, unknown> } }>('/tables/:t/rows', async (request, reply) => {
  const { columns } = table(request.params.t);
  const placeholders = columns.map((_, i) => `$${i + 1}`).join(', ');
  const result = await pool.query(
    `INSERT INTO ${request.params.t} (${columns.join(', ')}) VALUES (${placeholders}) RETURNING *`,
    columns.map((c) => request.body.row[c]),
  );
  return reply.code(201).send({ row: result.rows[0] });
});
app.post<{ Params: { t: string }; Body: { rows: Record<string, unknown>[] } }>('/tables/:t/bulk', async (request, reply) => {
  const { columns, arrayTypes } = table(request.params.t);
  const arrays = columns.map((c) => request.body.rows.map((row) => row[c]));
  const unnest = arrayTypes.map((type, i) => `$${i + 1}::${type}`).join(', ');
  const result = await pool.query(`INSERT INTO ${request.params.t} (${columns.join(', ')}) SELECT * FROM unnest(${unnest})`, arrays);
  return reply.code(201).send({ inserted: result.rowCount });
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
