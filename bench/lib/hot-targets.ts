/**
 * The hot-paths bench's two servers under test, as request shapes for autocannon: svcdb's REST and
 * SQL routes, and the same operations on the fastify + pg baseline (pg-baseline.ts). Both hold the
 * same tables: t (TABLE_ROWS rows), ins and bulk (empty), s (the mixed load's growing table).
 */
import pg from 'pg';
import type { RequestShape } from './load.js';
import { progress } from './print-result.js';

export const API_KEY = 'bench-key';
const AUTH = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };
const JSON_HEADERS = { 'content-type': 'application/json' };

export type TargetName = 'svcdb' | 'pg';

/** The request shapes of one server; `next*` counters keep inserted ids unique within the run. */
export interface Target {
  readonly name: TargetName;
  readonly url: string;
  getRow(table: string, id: () => number): RequestShape;
  pointSelect(id: () => number): RequestShape;
  insertRow(row: () => Record<string, unknown>): RequestShape;
  insertSql(row: () => { id: number; name: string; amount: number }): RequestShape;
  /** POST of `rows` in one request (svcdb: /tables/{t}/rows; pg: /tables/{t}/bulk, unnest arrays). */
  bulk(table: string, rows: readonly Record<string, unknown>[]): { path: string; headers: Record<string, string>; body: string };
  /** The mixed load: each request an insert into s, a read of s by id or the aggregate over s, picked at random. */
  mixed(pick: MixedPick): RequestShape;
  /** A SQL statement over HTTP (svcdb POST /api/v1/query, pg POST /query). */
  sql(text: string, params?: readonly unknown[]): { path: string; headers: Record<string, string>; body: string };
}

/** Where the mixed load's values come from (the bench keeps the counters). */
export interface MixedPick {
  /** 0: insert, 1: read by id, 2: aggregate. */
  kind(): 0 | 1 | 2;
  /** A fresh id for an insert. */
  newId(): number;
  /** An id certainly present (from the initial load). */
  existingId(): number;
  /** n for a new row, and the aggregate's threshold. */
  n(): number;
}

export const MIXED_AGGREGATE = 'SELECT count(*), max(n) FROM s WHERE n > $1';

/** The mixed load's setupRequest over one server's routes. */
function mixedShape(pick: MixedPick, headers: Record<string, string>, rowsPath: string, queryPath: string): RequestShape {
  return {
    method: 'GET',
    headers,
    // Fresh headers every time: autocannon writes Content-Length into the headers object it is
    // given and would send a POST's length with the next GET (which then fails as a bad request).
    setupRequest: (req: object) => {
      const kind = pick.kind();
      const fresh = { ...req, headers: { ...headers } };
      if (kind === 0) return { ...fresh, method: 'POST', path: rowsPath, body: JSON.stringify({ row: { id: pick.newId(), n: pick.n() } }) };
      if (kind === 1) return { ...fresh, method: 'GET', path: `${rowsPath}/${pick.existingId()}`, body: undefined };
      return { ...fresh, method: 'POST', path: queryPath, body: JSON.stringify({ sql: MIXED_AGGREGATE, params: [pick.n()] }) };
    },
  };
}

const setBody =
  (body: () => string) =>
  (req: object): object => ({ ...req, body: body() });
const setPath =
  (pathOf: () => string) =>
  (req: object): object => ({ ...req, path: pathOf() });

/** svcdb's routes. */
export function svcdbTarget(url: string): Target {
  const sql = (text: string, params: readonly unknown[] = []): { path: string; headers: Record<string, string>; body: string } => ({
    path: '/api/v1/query',
    headers: AUTH,
    body: JSON.stringify({ sql: text, params, timeout_ms: 600_000 }),
  });
  return {
    name: 'svcdb',
    url,
    getRow: (table, id) => ({ method: 'GET', headers: AUTH, setupRequest: setPath(() => `/api/v1/tables/${table}/rows/${id()}`) }),
    pointSelect: (id) => ({
      method: 'POST',
      path: '/api/v1/query',
      headers: AUTH,
      setupRequest: setBody(() => JSON.stringify({ sql: 'SELECT * FROM t WHERE id = $1', params: [id()] })),
    }),
    insertRow: (row) => ({ method: 'POST', path: '/api/v1/tables/ins/rows', headers: AUTH, setupRequest: setBody(() => JSON.stringify({ row: row() })) }),
    insertSql: (row) => ({
      method: 'POST',
      path: '/api/v1/query',
      headers: AUTH,
      setupRequest: setBody(() => {
        const r = row();
        return JSON.stringify({ sql: 'INSERT INTO ins (id, name, amount) VALUES ($1, $2, $3)', params: [r.id, r.name, r.amount] });
      }),
    }),
    bulk: (table, rows) => ({ path: `/api/v1/tables/${table}/rows`, headers: AUTH, body: JSON.stringify({ rows }) }),
    mixed: (pick) => mixedShape(pick, AUTH, '/api/v1/tables/s/rows', '/api/v1/query'),
    sql,
  };
}

/** The fastify + pg baseline's routes (pg-baseline.ts). */
export function pgTarget(url: string): Target {
  const sql = (text: string, params: readonly unknown[] = []): { path: string; headers: Record<string, string>; body: string } => ({
    path: '/query',
    headers: JSON_HEADERS,
    body: JSON.stringify({ sql: text, params }),
  });
  return {
    name: 'pg',
    url,
    getRow: (table, id) => ({ method: 'GET', setupRequest: setPath(() => `/tables/${table}/rows/${id()}`) }),
    pointSelect: (id) => ({
      method: 'POST',
      path: '/query',
      headers: JSON_HEADERS,
      setupRequest: setBody(() => JSON.stringify({ sql: 'SELECT * FROM t WHERE id = $1', params: [id()] })),
    }),
    insertRow: (row) => ({ method: 'POST', path: '/tables/ins/rows', headers: JSON_HEADERS, setupRequest: setBody(() => JSON.stringify({ row: row() })) }),
    insertSql: (row) => ({
      method: 'POST',
      path: '/query',
      headers: JSON_HEADERS,
      setupRequest: setBody(() => {
        const r = row();
        return JSON.stringify({ sql: 'INSERT INTO ins (id, name, amount) VALUES ($1, $2, $3)', params: [r.id, r.name, r.amount] });
      }),
    }),
    bulk: (table, rows) => ({ path: `/tables/${table}/bulk`, headers: JSON_HEADERS, body: JSON.stringify({ rows }) }),
    mixed: (pick) => mixedShape(pick, JSON_HEADERS, '/tables/s/rows', '/query'),
    sql,
  };
}

/** Runs one statement over HTTP; throws on a non-2xx answer. */
export async function httpSql(target: Target, text: string, params: readonly unknown[] = []): Promise<unknown> {
  const request = target.sql(text, params);
  const response = await fetch(`${target.url}${request.path}`, { method: 'POST', headers: request.headers, body: request.body });
  const body = await response.text();
  if (!response.ok) throw new Error(`${target.name}: ${text.slice(0, 60)}: ${response.status} ${body.slice(0, 300)}`);
  return JSON.parse(body) as unknown;
}

export const TABLES_DDL = [
  'CREATE TABLE t (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)',
  'CREATE TABLE ins (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)',
  'CREATE TABLE bulk (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)',
  'CREATE TABLE s (id BIGINT PRIMARY KEY, n INTEGER NOT NULL)',
  'CREATE TABLE v (id BIGINT PRIMARY KEY, name TEXT NOT NULL, amount DOUBLE PRECISION NOT NULL)',
];

/**
 * Rows per load statement. Kept so one log record stays under 1 MiB: a bigger record whose header
 * straddles a 1 MiB read chunk is taken for a torn tail when svcdb restarts (see the report of
 * issue 16's bench), and profile mode restarts svcdb between cases.
 */
const LOAD_STATEMENT_ROWS = 10_000;

/** The load statements: t gets `tableRows` rows, s `mixedRows` rows with n = id % 1000. */
export function loadStatements(tableRows: number, mixedRows: number): string[] {
  const out: string[] = [];
  for (let start = 1; start <= tableRows; start += LOAD_STATEMENT_ROWS) {
    const end = Math.min(start + LOAD_STATEMENT_ROWS - 1, tableRows);
    out.push(`INSERT INTO t SELECT g, 'name-' || g, g * 1.5 FROM generate_series(${start}, ${end}) g`);
  }
  out.push(`INSERT INTO s SELECT g, g % 1000 FROM generate_series(1, ${mixedRows}) g`);
  return out;
}

/** Creates and fills the tables on svcdb (over HTTP). */
export async function loadSvcdb(target: Target, tableRows: number, mixedRows: number): Promise<void> {
  progress(`svcdb: loading ${tableRows} rows into t, ${mixedRows} into s`);
  for (const statement of [...TABLES_DDL, ...loadStatements(tableRows, mixedRows)]) await httpSql(target, statement);
}

/** Creates and fills the same tables on PostgreSQL (directly, one client), then ANALYZE as a PostgreSQL user would. */
export async function loadPostgres(connection: { host: string; port: number; user: string }, tableRows: number, mixedRows: number): Promise<void> {
  progress(`PostgreSQL: loading ${tableRows} rows into t, ${mixedRows} into s`);
  const client = new pg.Client({ ...connection, database: 'postgres' });
  await client.connect();
  try {
    for (const statement of [...TABLES_DDL, ...loadStatements(tableRows, mixedRows)]) await client.query(statement);
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}
