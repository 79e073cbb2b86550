/**
 * GraphQL mutations over HTTP against a real server: every mutation field with Hasura's names,
 * on_conflict both ways, returning (relations included), _set and _inc, the type mapping on
 * input, one transaction per request (checked through SQL), and a 1,000-object insert.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { data, gql, sql } from './client.js';

let server: TestServer;

/** Rows of a SELECT, run in process as the admin. */
async function rows(text: string): Promise<Record<string, unknown>[]> {
  return (await server.sql.execute(text, { params: [], timeoutMs: 10_000, maxRows: 10_000, tenant: 'default' })).rows;
}

beforeAll(async () => {
  server = await startTestServer();
  await sql(server, "CREATE TABLE authors (id INT PRIMARY KEY, name TEXT NOT NULL UNIQUE, country TEXT DEFAULT 'n/a')");
  await sql(server, 'CREATE TABLE books (id SERIAL PRIMARY KEY, author_id INT REFERENCES authors(id), title TEXT NOT NULL, pages INT, stock BIGINT DEFAULT 0)');
  await sql(
    server,
    `CREATE TABLE kinds (id BIGINT PRIMARY KEY, amount NUMERIC(12,2), doc JSONB, u UUID, at TIMESTAMPTZ, day DATE, ratio DOUBLE PRECISION, ok BOOLEAN, emb VECTOR(3))`,
  );
  await sql(server, 'CREATE TABLE bulk (id INT PRIMARY KEY, label TEXT NOT NULL, n INT)');
  await sql(server, 'CREATE VIEW author_names AS SELECT name FROM authors');
});

afterAll(async () => {
  await server?.close();
});

describe('GraphQL mutations', () => {
  it('insert_ returns affected_rows and returning; left-out columns take their defaults, null is NULL', async () => {
    const d = await data(
      server,
      `mutation {
      insert_authors(objects: [{id: 1, name: "Ursula", country: "US"}, {id: 2, name: "Stanislaw"}, {id: 3, name: "Italo", country: null}]) {
        affected_rows returning { id name country }
      }
    }`,
    );
    expect(d.insert_authors).toEqual({
      affected_rows: 3,
      returning: [
        { id: 1, name: 'Ursula', country: 'US' },
        { id: 2, name: 'Stanislaw', country: 'n/a' },
        { id: 3, name: 'Italo', country: null },
      ],
    });
    const only = await data(
      server,
      'mutation { insert_books(objects: [{author_id: 1, title: "Earthsea", pages: 200}]) { affected_rows } none: insert_books(objects: []) { affected_rows returning { id } } }',
    );
    expect(only).toEqual({ insert_books: { affected_rows: 1 }, none: { affected_rows: 0, returning: [] } });
    expect(await rows('SELECT id, title, stock FROM books')).toEqual([{ id: 1, title: 'Earthsea', stock: 0 }]);
  });

  it('insert_one returns the row, with relations that see the rows written earlier in the request', async () => {
    const d = await data(
      server,
      `mutation {
      insert_authors_one(object: {id: 4, name: "Octavia"}) { id }
      insert_books_one(object: {author_id: 4, title: "Kindred", pages: 264}) { id title authors { name books { title } } }
    }`,
    );
    expect(d.insert_authors_one).toEqual({ id: 4 });
    expect(d.insert_books_one).toEqual({ id: 2, title: 'Kindred', authors: { name: 'Octavia', books: [{ title: 'Kindred' }] } });
  });

  it('on_conflict updates the given columns, filtered by its where; empty update_columns does nothing', async () => {
    const upsert = await data(
      server,
      `mutation {
      insert_authors(objects: [{id: 1, name: "Ursula K.", country: "XX"}, {id: 5, name: "Ted"}], on_conflict: {constraint: authors_pkey, update_columns: [name]}) {
        affected_rows returning { id name country }
      }
    }`,
    );
    expect(upsert.insert_authors).toEqual({
      affected_rows: 2,
      returning: [
        { id: 1, name: 'Ursula K.', country: 'US' },
        { id: 5, name: 'Ted', country: 'n/a' },
      ],
    });
    const filtered = await data(
      server,
      `mutation {
      insert_authors(objects: [{id: 1, name: "U"}, {id: 2, name: "S"}], on_conflict: {constraint: authors_pkey, update_columns: [name], where: {country: {_eq: "US"}}}) {
        affected_rows returning { id name }
      }
    }`,
    );
    expect(filtered.insert_authors).toEqual({ affected_rows: 1, returning: [{ id: 1, name: 'U' }] });
    const nothing = await data(
      server,
      `mutation {
      insert_authors(objects: [{id: 6, name: "Stanislaw"}, {id: 7, name: "Ann"}], on_conflict: {constraint: authors_name_key, update_columns: []}) { affected_rows returning { id } }
      skipped: insert_authors_one(object: {id: 2, name: "other"}, on_conflict: {constraint: authors_pkey}) { id }
    }`,
    );
    expect(nothing).toEqual({ insert_authors: { affected_rows: 1, returning: [{ id: 7 }] }, skipped: null });
    expect(await rows('SELECT id, name FROM authors ORDER BY id')).toEqual([
      { id: 1, name: 'U' },
      { id: 2, name: 'Stanislaw' },
      { id: 3, name: 'Italo' },
      { id: 4, name: 'Octavia' },
      { id: 5, name: 'Ted' },
      { id: 7, name: 'Ann' },
    ]);
  });

  it('update_ applies _set and _inc to the rows where matches ({} is every row)', async () => {
    const d = await data(
      server,
      `mutation {
      update_books(where: {authors: {name: {_eq: "Octavia"}}}, _set: {title: "Kindred (2nd)"}, _inc: {pages: 6, stock: "9007199254740993"}) {
        affected_rows returning { id title pages stock }
      }
    }`,
    );
    expect(d.update_books).toEqual({ affected_rows: 1, returning: [{ id: 2, title: 'Kindred (2nd)', pages: 270, stock: '9007199254740993' }] });
    const all = await data(server, 'mutation { update_books(where: {}, _inc: {pages: 1}) { affected_rows } }');
    expect(all.update_books.affected_rows).toBe(2);
    expect(await rows('SELECT id, pages FROM books ORDER BY id')).toEqual([
      { id: 1, pages: 201 },
      { id: 2, pages: 271 },
    ]);
  });

  it('update_by_pk returns the updated row, or null when there is none', async () => {
    const d = await data(
      server,
      `mutation($id: Int!) {
      hit: update_books_by_pk(pk_columns: {id: $id}, _set: {title: "A Wizard of Earthsea"}, _inc: {pages: -1}) { id title pages }
      miss: update_books_by_pk(pk_columns: {id: 99}, _set: {title: "x"}) { id }
    }`,
      { id: 1 },
    );
    expect(d).toEqual({ hit: { id: 1, title: 'A Wizard of Earthsea', pages: 200 }, miss: null });
  });

  it('delete_ and delete_by_pk return what they removed', async () => {
    await data(server, 'mutation { insert_books(objects: [{title: "a", pages: 1}, {title: "b", pages: 2}, {title: "c", pages: 3}]) { affected_rows } }');
    const d = await data(
      server,
      `mutation {
      delete_books(where: {_and: [{author_id: {_is_null: true}}, {pages: {_lte: 2}}]}) { affected_rows returning { title } }
      delete_books_by_pk(id: 5) { title }
      gone: delete_books_by_pk(id: 5) { title }
    }`,
    );
    expect(d).toEqual({ delete_books: { affected_rows: 2, returning: [{ title: 'a' }, { title: 'b' }] }, delete_books_by_pk: { title: 'c' }, gone: null });
    expect(await rows('SELECT id FROM books ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('runs the fields in order, each seeing the ones before (read your writes)', async () => {
    const d = await data(
      server,
      `mutation {
      insert_authors_one(object: {id: 10, name: "Ten"}) { name }
      update_authors(where: {id: {_eq: 10}}, _set: {country: "FR"}) { returning { name country } }
      delete_authors(where: {country: {_eq: "FR"}}) { affected_rows returning { id } }
    }`,
    );
    expect(d).toEqual({
      insert_authors_one: { name: 'Ten' },
      update_authors: { returning: [{ name: 'Ten', country: 'FR' }] },
      delete_authors: { affected_rows: 1, returning: [{ id: 10 }] },
    });
    expect(await rows('SELECT id FROM authors WHERE id = 10')).toEqual([]);
  });

  it('commits all fields or none: the second field failing leaves the first unwritten, data null', async () => {
    const reply = await gql(
      server,
      `mutation {
      insert_authors_one(object: {id: 20, name: "Twenty"}) { id }
      update_books(where: {id: {_eq: 1}}, _set: {author_id: 999}) { affected_rows }
      delete_authors_by_pk(id: 3) { id }
    }`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.data).toBeNull();
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].extensions.code).toBe('CONSTRAINT_VIOLATION');
    expect(reply.body.errors[0].path).toEqual(['update_books']);
    expect(await rows('SELECT id FROM authors WHERE id IN (3, 20) ORDER BY id')).toEqual([{ id: 3 }]);
    expect(await rows('SELECT author_id FROM books WHERE id = 1')).toEqual([{ author_id: 1 }]);
    // The server keeps serving, and the same insert alone commits.
    expect((await data(server, 'mutation { insert_authors_one(object: {id: 20, name: "Twenty"}) { id } }')).insert_authors_one).toEqual({ id: 20 });
  });

  it('runs each operation of a batched POST as its own transaction', async () => {
    const reply = await gql(server, [
      { query: 'mutation { insert_authors_one(object: {id: 30, name: "Thirty"}) { id } }' },
      { query: 'mutation { insert_authors_one(object: {id: 31, name: "Thirty-one"}) { id } insert_books_one(object: {author_id: 404, title: "x"}) { id } }' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.body[0]).toEqual({ data: { insert_authors_one: { id: 30 } } });
    expect(reply.body[1].data).toBeNull();
    expect(reply.body[1].errors[0].extensions.code).toBe('CONSTRAINT_VIOLATION');
    expect(await rows('SELECT id FROM authors WHERE id IN (30, 31)')).toEqual([{ id: 30 }]);
  });

  it('carries every type as gql-core maps it (bigint and numeric as strings, jsonb, uuid, timestamps, vector)', async () => {
    const object = {
      id: '9007199254740993',
      amount: '1234.5',
      doc: { tags: ['a', 'b'], n: 1 },
      u: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11',
      at: '2024-01-02T03:04:05Z',
      day: '2024-01-02',
      ratio: 0.25,
      ok: true,
      emb: [1, 2, 3],
    };
    const d = await data(server, 'mutation($o: kinds_insert_input!) { insert_kinds_one(object: $o) { id amount doc u at day ratio ok emb } }', { o: object });
    expect(d.insert_kinds_one).toEqual({ ...object, amount: '1234.50', u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' });
    const inc = await data(
      server,
      'mutation { update_kinds_by_pk(pk_columns: {id: "9007199254740993"}, _inc: {amount: "0.55", ratio: 1}, _set: {doc: {x: null}}) { amount ratio doc } }',
    );
    expect(inc.update_kinds_by_pk).toEqual({ amount: '1235.05', ratio: 1.25, doc: { x: null } });
  });

  it('inserts 1,000 objects in one field, as one statement', async () => {
    const objects = Array.from({ length: 1000 }, (_, i) => ({ id: i, label: `row ${i}`, ...(i % 2 ? { n: i } : {}) }));
    const d = await data(server, 'mutation($rows: [bulk_insert_input!]!) { insert_bulk(objects: $rows) { affected_rows returning { id } } }', {
      rows: objects,
    });
    expect(d.insert_bulk.affected_rows).toBe(1000);
    expect(d.insert_bulk.returning).toHaveLength(1000);
    expect(await rows('SELECT count(*) AS c, count(n) AS with_n, sum(id) AS s FROM bulk')).toEqual([{ c: 1000, with_n: 500, s: 499500 }]);
  });

  it('offers no mutations for views, and on_conflict only where a unique key exists', async () => {
    const d = await data(server, '{ __schema { mutationType { fields { name args { name } } } } }');
    const fields = new Map<string, string[]>(
      d.__schema.mutationType.fields.map((f: { name: string; args: { name: string }[] }) => [f.name, f.args.map((a) => a.name)]),
    );
    expect([...fields.keys()].some((name) => name.includes('author_names'))).toBe(false);
    expect(fields.get('insert_authors')).toEqual(['objects', 'on_conflict']);
    expect(fields.get('update_books')).toEqual(['where', '_set', '_inc']);
    expect(fields.get('delete_books_by_pk')).toEqual(['id']);
    const constraints = await data(server, '{ __type(name: "authors_constraint") { enumValues { name } } }');
    expect(constraints.__type.enumValues.map((v: { name: string }) => v.name)).toEqual(['authors_pkey', 'authors_name_key']);
  });
});
