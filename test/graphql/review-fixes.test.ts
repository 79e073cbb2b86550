/**
 * Regression tests for the GraphQL review's findings (denial of service through the JIT and
 * fragments, batch order, nested limits, where depth), against a real server.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { countStatements, data, gql, sql } from './client.js';
import { eventually, subscribe, WebSocket } from './subscriptions/harness.js';

let server: TestServer;

/** Generous: the bugs blocked the loop for seconds; a healthy server stays far below. */
const LOOP_BLOCKED_MS_MAX = 2000;

/** Runs `work` and returns the longest event-loop stall (ms) seen meanwhile in this process (the server's). */
async function loopStallMs(work: () => Promise<void>): Promise<number> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  try {
    await work();
  } finally {
    histogram.disable();
  }
  return histogram.max / 1e6;
}

beforeAll(async () => {
  server = await startTestServer();
  await sql(server, 'CREATE TABLE a (id INT PRIMARY KEY, name TEXT, n INT)');
  await sql(server, "INSERT INTO a VALUES (1, 'x', 1), (2, NULL, 2), (3, 'y', NULL)");
  await sql(server, 'CREATE TABLE c (id INT PRIMARY KEY, a_id INT REFERENCES a(id), v INT)');
  await sql(server, 'INSERT INTO c VALUES (1, 1, 10), (2, 1, 20), (3, 2, 30)');
});

afterAll(async () => {
  await server?.close();
});

describe('GraphQL review fixes', () => {
  it('a bool_exp variable sent again and again does not stall the server (no JIT)', async () => {
    const stall = await loopStallMs(async () => {
      for (let i = 0; i < 3; i++) {
        const d = await data(server, 'query($w: a_bool_exp) { a(where: $w, order_by: {id: asc}) { id } }', { w: { n: { _gt: 1 } } });
        expect(d.a).toEqual([{ id: 2 }]);
        const m = await data(server, 'mutation($w: c_bool_exp!) { update_c(where: $w, _set: {v: 99}) { affected_rows } }', { w: { id: { _eq: 3 } } });
        expect(m.update_c).toEqual({ affected_rows: 1 });
      }
    });
    expect(stall).toBeLessThan(LOOP_BLOCKED_MS_MAX);
  });

  it('a doubling chain of 30 fragments is refused as too costly, quickly', async () => {
    const fragments = Array.from({ length: 30 }, (_, i) => `fragment F${i} on c { id ...F${i + 1} ...F${i + 1} }`);
    fragments.push('fragment F30 on c { id v }');
    const query = `{ c { ...F0 } } ${fragments.join(' ')}`;
    let reply: Awaited<ReturnType<typeof gql>> | undefined;
    const stall = await loopStallMs(async () => {
      reply = await gql(server, query);
    });
    expect(reply?.body.errors?.[0]?.extensions?.code).toBe('LIMIT_EXCEEDED');
    expect(stall).toBeLessThan(LOOP_BLOCKED_MS_MAX);
  });

  it('runs a batch in order: an update sees the row the insert before it wrote', async () => {
    const reply = await gql(server, [
      { query: 'mutation { insert_a_one(object: {id: 10, name: "new", n: 0}) { id } }' },
      { query: 'mutation { update_a(where: {id: {_eq: 10}}, _set: {n: 7}) { affected_rows } }' },
      { query: '{ a_by_pk(id: 10) { n } }' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual([{ data: { insert_a_one: { id: 10 } } }, { data: { update_a: { affected_rows: 1 } } }, { data: { a_by_pk: { n: 7 } } }]);
  });

  it('refuses a negative nested limit or offset as the top level does', async () => {
    const top = await gql(server, '{ a(limit: -1) { id } }');
    for (const query of ['{ a { c(limit: -5) { v } } }', '{ a { c(offset: -1) { v } } }']) {
      const reply = await gql(server, query);
      expect(reply.body.errors?.[0]?.extensions?.code, query).toBe('INVALID_QUERY');
      expect(reply.body.errors[0].message, query).toMatch(/must not be negative/);
    }
    expect(top.body.errors?.[0]?.extensions?.code).toBe('INVALID_QUERY');
  });

  it('refuses a where nested deeper than 32 levels with LIMIT_EXCEEDED, and answers one of 32', async () => {
    const nested = (levels: number): string => '{_not: '.repeat(levels) + '{id: {_eq: 1}}' + '}'.repeat(levels);
    const deep = await gql(server, `{ a(where: ${nested(500)}) { id } }`);
    expect(deep.body.errors?.[0]?.extensions).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 'where_depth' } });
    const ok = await data(server, `{ a(where: ${nested(30)}, order_by: {id: asc}) { id } }`);
    expect(ok.a.map((r: { id: number }) => r.id)).toEqual([1]);
  });

  it('_entities fails a bad key or an unknown __typename alone, with VALIDATION_ERROR', async () => {
    const reply = await gql(
      server,
      `{ _entities(representations: [{__typename: "a", id: 1}, {__typename: "a", id: {x: 1}}, {__typename: "nope", id: 1}, {__typename: "a", id: 2}]) {
        ... on a { id name }
      } }`,
    );
    expect(reply.body.data._entities).toEqual([{ id: 1, name: 'x' }, null, null, { id: 2, name: null }]);
    const errors = (reply.body.errors as { path: unknown[]; extensions: { code: string } }[]).map((e) => [e.path, e.extensions.code]);
    errors.sort((x, y) => String(x[0]).localeCompare(String(y[0])));
    expect(errors).toEqual([
      [['_entities', 1], 'VALIDATION_ERROR'],
      [['_entities', 2], 'VALIDATION_ERROR'],
    ]);
    // Still batched: the good representations share one statement.
    const { statements } = await countStatements(server, () =>
      gql(server, '{ _entities(representations: [{__typename: "a", id: 1}, {__typename: "a", id: 2}]) { ... on a { id } } }'),
    );
    expect(statements).toHaveLength(1);
  });

  it("an unsubscribe aborts the signal of its live query's statements", async () => {
    const engine = server.sql as unknown as { execute: (...args: unknown[]) => Promise<unknown> };
    const original = engine.execute;
    const signals: AbortSignal[] = [];
    engine.execute = function (this: unknown, ...args: unknown[]) {
      const signal = (args[1] as { signal?: AbortSignal } | undefined)?.signal;
      if (signal && String(args[0]).includes('"c"')) signals.push(signal);
      return original.apply(this, args);
    };
    const client = createClient({
      url: `${server.baseUrl.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${server.apiKey}` },
      retryAttempts: 0,
      lazy: true,
    });
    try {
      const sub = subscribe(client, 'subscription { c(order_by: {id: asc}) { id } }');
      await sub.until((s) => s.results.length === 1);
      expect(signals.length).toBeGreaterThan(0);
      expect(signals.some((signal) => signal.aborted)).toBe(false);
      sub.stop();
      await eventually(() => signals.every((signal) => signal.aborted));
    } finally {
      engine.execute = original;
      await client.dispose();
    }
  });
});
