import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { data, gql, sql } from './client.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  await sql(server, 'CREATE TABLE authors (id INT PRIMARY KEY, name TEXT NOT NULL, country TEXT)');
  await sql(server, 'CREATE TABLE books (id INT PRIMARY KEY, author_id INT REFERENCES authors(id), title TEXT NOT NULL, pages INT, price NUMERIC(8,2))');
  await sql(server, "INSERT INTO authors VALUES (1, 'Ursula', 'US'), (2, 'Stanislaw', 'PL'), (3, 'Italo', NULL)");
  await sql(
    server,
    `INSERT INTO books VALUES
    (1, 1, 'Earthsea', 200, 9.99), (2, 1, 'Dispossessed', 380, 12.50), (3, 1, 'Lathe', 180, NULL),
    (4, 2, 'Solaris', 220, 11.00), (5, 2, 'Cyberiad', 300, 14.25), (6, NULL, 'Anonymous', 50, 1.00)`,
  );
});

afterAll(async () => {
  await server?.close();
});

describe('GraphQL queries', () => {
  it('lists a table with where, order_by, limit and offset', async () => {
    const d = await data(server, '{ books(where: {pages: {_gt: 150}}, order_by: [{pages: desc}], limit: 2, offset: 1) { id title pages } }');
    expect(d.books).toEqual([
      { id: 5, title: 'Cyberiad', pages: 300 },
      { id: 4, title: 'Solaris', pages: 220 },
    ]);
  });

  it('finds a row by primary key, and null when there is none', async () => {
    const d = await data(server, 'query($id: Int!) { hit: authors_by_pk(id: $id) { name } miss: authors_by_pk(id: 99) { name } }', { id: 2 });
    expect(d).toEqual({ hit: { name: 'Stanislaw' }, miss: null });
  });

  it('applies every comparison operator', async () => {
    const cases: [string, number[]][] = [
      ['{id: {_eq: 2}}', [2]],
      ['{id: {_neq: 2}}', [1, 3, 4, 5, 6]],
      ['{id: {_gte: 5}}', [5, 6]],
      ['{id: {_lt: 2}}', [1]],
      ['{id: {_lte: 2}}', [1, 2]],
      ['{id: {_in: [1, 4]}}', [1, 4]],
      ['{id: {_nin: [1, 2, 3]}}', [4, 5, 6]],
      ['{id: {_in: []}}', []],
      ['{title: {_like: "%s%"}}', [1, 2, 4, 6]],
      ['{title: {_ilike: "s%"}}', [4]],
      ['{title: {_nlike: "%a%"}}', [2, 6]],
      ['{price: {_is_null: true}}', [3]],
      ['{author_id: {_is_null: true}}', [6]],
      ['{_or: [{id: {_eq: 1}}, {id: {_eq: 6}}]}', [1, 6]],
      ['{_and: [{id: {_gt: 1}}, {id: {_lt: 4}}]}', [2, 3]],
      ['{_not: {id: {_gt: 1}}}', [1]],
      ['{_or: []}', []],
      ['{_and: []}', [1, 2, 3, 4, 5, 6]],
      ['{price: {_gt: "10.5"}}', [2, 4, 5]],
    ];
    for (const [where, ids] of cases) {
      const d = await data(server, `{ books(where: ${where}) { id } }`);
      expect(
        d.books.map((b: { id: number }) => b.id),
        where,
      ).toEqual(ids);
    }
  });

  it('filters through relations in both directions', async () => {
    const parents = await data(server, '{ authors(where: {books: {pages: {_gt: 250}}}) { id } }');
    expect(parents.authors).toEqual([{ id: 1 }, { id: 2 }]);
    const children = await data(server, '{ books(where: {authors: {country: {_eq: "PL"}}}) { id } }');
    expect(children.books).toEqual([{ id: 4 }, { id: 5 }]);
  });

  it('nests relations both ways, with their own arguments', async () => {
    const d = await data(
      server,
      `{
      authors(order_by: {id: asc}) { name books(order_by: {pages: desc}, limit: 2, where: {pages: {_gt: 100}}) { title authors { name } } }
      books_by_pk(id: 6) { title authors { name } }
    }`,
    );
    expect(d.authors).toEqual([
      {
        name: 'Ursula',
        books: [
          { title: 'Dispossessed', authors: { name: 'Ursula' } },
          { title: 'Earthsea', authors: { name: 'Ursula' } },
        ],
      },
      {
        name: 'Stanislaw',
        books: [
          { title: 'Cyberiad', authors: { name: 'Stanislaw' } },
          { title: 'Solaris', authors: { name: 'Stanislaw' } },
        ],
      },
      { name: 'Italo', books: [] },
    ]);
    expect(d.books_by_pk).toEqual({ title: 'Anonymous', authors: null });
  });

  it("orders by a parent's column through an object relation", async () => {
    const d = await data(server, '{ books(where: {author_id: {_is_null: false}}, order_by: [{authors: {name: asc}}, {pages: desc}]) { id } }');
    expect(d.books.map((b: { id: number }) => b.id)).toEqual([5, 4, 2, 1, 3]);
  });

  it("pages each parent's children with offset", async () => {
    const d = await data(server, '{ authors(where: {id: {_lte: 2}}) { id books(order_by: {id: asc}, limit: 1, offset: 1) { id } } }');
    expect(d.authors).toEqual([
      { id: 1, books: [{ id: 2 }] },
      { id: 2, books: [{ id: 5 }] },
    ]);
  });

  it('aggregates, with and without nodes', async () => {
    const only = await data(
      server,
      '{ books_aggregate(where: {author_id: {_eq: 1}}) { aggregate { count sum { pages price } avg { pages } min { title } max { pages } } } }',
    );
    expect(only.books_aggregate.aggregate).toEqual({
      count: 3,
      sum: { pages: 760, price: '22.49' },
      avg: { pages: 760 / 3 },
      min: { title: 'Dispossessed' },
      max: { pages: 380 },
    });
    const both = await data(server, '{ books_aggregate(order_by: {id: asc}, limit: 2) { aggregate { count max { pages } } nodes { id } } }');
    expect(both.books_aggregate).toEqual({ aggregate: { count: 2, max: { pages: 380 } }, nodes: [{ id: 1 }, { id: 2 }] });
    const distinct = await data(server, '{ books_aggregate { aggregate { all: count n: count(columns: [author_id], distinct: true) } nodes { id } } }');
    expect(distinct.books_aggregate.aggregate).toEqual({ all: 6, n: 2 });
    expect(distinct.books_aggregate.nodes).toHaveLength(6);
    const none = await data(server, '{ books_aggregate(where: {id: {_gt: 100}}) { aggregate { count sum { pages } } nodes { id } } }');
    expect(none.books_aggregate).toEqual({ aggregate: { count: 0, sum: { pages: null } }, nodes: [] });
  });

  it("aggregates each parent's children through an array relation", async () => {
    const d = await data(
      server,
      '{ authors(order_by: {id: asc}) { id books_aggregate(where: {pages: {_gt: 190}}) { aggregate { count max { pages } } nodes { id } } } }',
    );
    expect(d.authors).toEqual([
      { id: 1, books_aggregate: { aggregate: { count: 2, max: { pages: 380 } }, nodes: [{ id: 1 }, { id: 2 }] } },
      { id: 2, books_aggregate: { aggregate: { count: 2, max: { pages: 300 } }, nodes: [{ id: 4 }, { id: 5 }] } },
      { id: 3, books_aggregate: { aggregate: { count: 0, max: { pages: null } }, nodes: [] } },
    ]);
  });

  it('answers fragments, aliases and __typename', async () => {
    const d = await data(server, 'fragment A on authors { name } { x: authors(where: {id: {_eq: 3}}) { __typename ...A ... on authors { id } } }');
    expect(d.x).toEqual([{ __typename: 'authors', name: 'Italo', id: 3 }]);
  });

  it('answers application/graphql-response+json when asked', async () => {
    const reply = await gql(server, '{ authors(limit: 1) { id } }', undefined, { accept: 'application/graphql-response+json' });
    expect(reply.status).toBe(200);
    expect(reply.type).toMatch(/^application\/graphql-response\+json/);
    const legacy = await gql(server, '{ authors(limit: 1) { id } }');
    expect(legacy.type).toMatch(/^application\/json/);
  });
});
