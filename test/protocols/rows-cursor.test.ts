import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { qs, restClient, type RestReply } from './rest-client.js';

type Row = { id: number; grp: number | null; label: string | null };

/** Cursor pagination of GET /tables/{t}/rows: keyset over order_by plus the primary key. */
describe('REST rows: cursor pagination', () => {
  let server: TestServer;
  let call: (method: string, path: string, body?: unknown) => Promise<RestReply>;
  const sql = async (text: string, params: unknown[] = []) => {
    const r = await call('POST', '/query', { sql: text, params });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as Record<string, unknown>[];
  };
  const page = async (table: string, query: Record<string, string | number | undefined>) => {
    const r = await call('GET', `/tables/${table}/rows${qs(query)}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { data: Row[]; pagination: { next_cursor: string | null; prev_cursor: string | null; has_more: boolean; total_count: number } };
  };

  /** Follows next_cursor (or prev_cursor) from a first page to the end, calling `between` after each page. */
  async function walk(
    table: string,
    query: Record<string, string | number | undefined>,
    direction: 'next' | 'prev',
    between: () => Promise<void> = async () => {},
  ) {
    const pages: Row[][] = [];
    let body = await page(table, query);
    for (let guard = 0; guard < 10_000; guard++) {
      pages.push(body.data);
      await between();
      const cursor = direction === 'next' ? body.pagination.next_cursor : body.pagination.prev_cursor;
      if (cursor === null) break;
      body = await page(table, { limit: query.limit, order_by: query.order_by, select: query.select, filter: query.filter, cursor });
    }
    return direction === 'next' ? pages.flat() : pages.reverse().flat();
  }

  /** The last page of an order (where a backward walk starts). */
  async function lastPage(table: string, query: Record<string, string | number | undefined>) {
    let body = await page(table, query);
    while (body.pagination.next_cursor !== null) body = await page(table, { ...query, cursor: body.pagination.next_cursor });
    return body;
  }

  beforeAll(async () => {
    server = await startTestServer();
    call = restClient(server);
    await sql('CREATE TABLE events (id BIGINT PRIMARY KEY, grp INT, label TEXT)');
    const rows: Row[] = Array.from({ length: 300 }, (_v, i) => ({ id: i, grp: i % 11 === 0 ? null : i % 7, label: i % 13 === 0 ? null : `L${i % 5}` }));
    expect((await call('POST', '/tables/events/rows', { rows })).status).toBe(201);
  });
  afterAll(() => server?.close());

  /** Initial rows with id % 5 === 0 may be deleted during a walk; the others exist throughout. */
  const stable = (id: number): boolean => id < 300 && id % 5 !== 0;
  /** Ids of rows inserted during walks: each walk takes its own range. */
  let walkIds = 10_000;

  for (const orderBy of [undefined, 'grp', '-grp,label', 'label,-grp']) {
    for (const direction of ['next', 'prev'] as const) {
      it(`order_by=${orderBy ?? '(primary key)'}, ${direction}: no row that exists throughout is skipped or repeated while rows come and go`, async () => {
        let nextId = (walkIds += 10_000);
        let victim = 0;
        const churn = async (): Promise<void> => {
          // New rows land everywhere in the order (before and after the cursor), old volatile ones go.
          const fresh = Array.from({ length: 4 }, (_v, k) => ({
            id: nextId++,
            grp: k === 0 ? null : ((nextId * 7) % 9) - 1,
            label: k === 1 ? null : `L${nextId % 6}`,
          }));
          const [inserted, deleted] = await Promise.all([
            call('POST', '/tables/events/rows', { rows: fresh }),
            call('DELETE', '/tables/events/rows', { filter: `id = ${victim} OR id = ${nextId - 9}` }),
          ]);
          expect(inserted.status).toBe(201);
          expect(deleted.status).toBe(200);
          victim += 5;
        };
        const query = { limit: 17, order_by: orderBy };
        let seen: Row[];
        if (direction === 'next') seen = await walk('events', query, 'next', churn);
        else {
          const last = await lastPage('events', query);
          const before = last.pagination.prev_cursor === null ? [] : await walk('events', { ...query, cursor: last.pagination.prev_cursor }, 'prev', churn);
          seen = [...before, ...last.data];
        }
        const ids = seen.map((r) => r.id);
        expect(new Set(ids).size, 'a row was repeated').toBe(ids.length);
        const missing = Array.from({ length: 300 }, (_v, i) => i).filter((i) => stable(i) && !ids.includes(i));
        expect(missing, 'a row that existed throughout was skipped').toEqual([]);
      });
    }
  }

  it('pages backward and forward over the same rows, with prev_cursor and has_more', async () => {
    await sql('CREATE TABLE quiet (id INT PRIMARY KEY, v INT)');
    await call('POST', '/tables/quiet/rows', { rows: Array.from({ length: 25 }, (_v, i) => ({ id: i, v: i % 3 })) });
    const first = await page('quiet', { limit: 10, order_by: '-v' });
    expect(first.pagination).toMatchObject({ has_more: true, prev_cursor: null, total_count: 25 });
    const second = await page('quiet', { limit: 10, cursor: first.pagination.next_cursor! });
    const third = await page('quiet', { limit: 10, cursor: second.pagination.next_cursor! });
    expect(third.data).toHaveLength(5);
    expect(third.pagination).toMatchObject({ has_more: false, next_cursor: null });
    const back = await page('quiet', { limit: 10, cursor: third.pagination.prev_cursor! });
    expect(back.data).toEqual(second.data);
    expect(back.pagination.has_more).toBe(true);
    const backAgain = await page('quiet', { limit: 10, cursor: back.pagination.prev_cursor! });
    expect(backAgain.data).toEqual(first.data);
    expect(backAgain.pagination.prev_cursor).toBeNull();
    const all = await sql('SELECT id, v FROM quiet ORDER BY v DESC, id');
    expect([...first.data, ...second.data, ...third.data]).toEqual(all);
    const offset = await page('quiet', { limit: 10, offset: 5, order_by: '-v' });
    expect(offset.pagination.prev_cursor).not.toBeNull();
    expect((await page('quiet', { limit: 5, cursor: offset.pagination.prev_cursor!, order_by: '-v' })).data).toEqual(first.data.slice(0, 5));
  });

  it('a cursor walk equals ORDER BY for any data, order and page size (nulls and ties included)', async () => {
    let run = 0;
    const rowArb = fc.record({
      a: fc.option(fc.integer({ min: -3, max: 3 }), { nil: null }),
      b: fc.option(fc.constantFrom('x', 'y', 'z', 'Y'), { nil: null }),
    });
    const orderArb = fc
      .subarray(['a', '-a', 'b', '-b'], { minLength: 0, maxLength: 2 })
      .filter((o) => new Set(o.map((x) => x.replace('-', ''))).size === o.length);
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { maxLength: 40 }), orderArb, fc.integer({ min: 1, max: 9 }), async (rows, order, limit) => {
        const table = `prop${run++}`;
        await sql(`CREATE TABLE ${table} (id INT PRIMARY KEY, a INT, b TEXT)`);
        if (rows.length > 0) await call('POST', `/tables/${table}/rows`, { rows: rows.map((r, i) => ({ id: i, ...r })) });
        const orderBy = order.length === 0 ? undefined : order.join(',');
        const sqlOrder = [...order.map((o) => (o.startsWith('-') ? `${o.slice(1)} DESC` : o)), 'id'].join(', ');
        const expected = await sql(`SELECT id, a, b FROM ${table} ORDER BY ${sqlOrder}`);
        const forward = await walk(table, { limit, order_by: orderBy }, 'next');
        expect(forward).toEqual(expected);
        const last = await lastPage(table, { limit, order_by: orderBy });
        const backward =
          last.pagination.prev_cursor === null ? [] : await walk(table, { limit, order_by: orderBy, cursor: last.pagination.prev_cursor }, 'prev');
        expect([...backward, ...last.data]).toEqual(expected);
        await sql(`DROP TABLE ${table}`);
      }),
      { numRuns: 30 },
    );
  });

  it('refuses cursors that do not fit the request', async () => {
    const first = await page('quiet', { limit: 5, order_by: 'v' });
    const cursor = first.pagination.next_cursor!;
    const other = await call('GET', `/tables/quiet/rows${qs({ cursor, order_by: '-v' })}`);
    expect(other.status).toBe(400);
    expect(other.body.error.details.reason).toBe('cursor_order_mismatch');
    expect((await call('GET', `/tables/quiet/rows${qs({ cursor, order_by: 'v' })}`)).status).toBe(200);
    expect((await call('GET', `/tables/quiet/rows${qs({ cursor, offset: 5 })}`)).status).toBe(400);
    for (const bad of ['garbage', Buffer.from('{"v":1}').toString('base64url'), Buffer.from('{"v":1,"o":"v,id","d":"next","k":[1]}').toString('base64url')]) {
      const r = await call('GET', `/tables/quiet/rows${qs({ cursor: bad })}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error.code).toBe('INVALID_QUERY');
    }
    // Values are parameters: a tampered cursor moves the page or is a type error, never SQL.
    const tampered = Buffer.from(JSON.stringify({ v: 1, o: 'v,id', d: 'next', k: ['1); DROP TABLE quiet; --', 1] })).toString('base64url');
    expect((await call('GET', `/tables/quiet/rows${qs({ cursor: tampered })}`)).status).toBe(422);
    expect((await sql('SELECT count(*) AS c FROM quiet'))[0]!.c).toBe(25);
    await sql('CREATE TABLE heap (v INT)');
    await call('POST', '/tables/heap/rows', { rows: [{ v: 1 }, { v: 2 }] });
    const heap = await page('heap', { limit: 1 });
    expect(heap.pagination).toMatchObject({ has_more: true, next_cursor: null, prev_cursor: null });
    expect((await call('GET', `/tables/heap/rows${qs({ cursor })}`)).body.error.details.reason).toBe('no_primary_key');
  });
});
