import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { countStatements, data, gql, sql } from './client.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
  await server?.close();
});

describe('GraphQL schema from the catalog', () => {
  it('loads 100 parents with their children and grandchildren in one statement per level', async () => {
    await sql(server, 'CREATE TABLE parents (id INT PRIMARY KEY, name TEXT)');
    await sql(server, 'CREATE TABLE children (id INT PRIMARY KEY, parent_id INT REFERENCES parents(id), n INT)');
    await sql(server, 'CREATE TABLE toys (id INT PRIMARY KEY, child_id INT REFERENCES children(id))');
    const parents = Array.from({ length: 100 }, (_, i) => `(${i}, 'p${i}')`).join(', ');
    const children = Array.from({ length: 1000 }, (_, i) => `(${i}, ${i % 100}, ${i})`).join(', ');
    const toys = Array.from({ length: 1000 }, (_, i) => `(${i}, ${i})`).join(', ');
    await sql(server, `INSERT INTO parents VALUES ${parents}`);
    await sql(server, `INSERT INTO children VALUES ${children}`);
    await sql(server, `INSERT INTO toys VALUES ${toys}`);
    const query = '{ parents(order_by: {id: asc}) { id children(order_by: {id: asc}, limit: 3) { n parents { name } toys { id } } } }';
    await data(server, query); // the schema is built outside the count
    const { result, statements } = await countStatements(server, () => data(server, query));
    expect(result.parents).toHaveLength(100);
    expect(result.parents[7].children).toEqual([0, 1, 2].map((k) => ({ n: 7 + 100 * k, parents: { name: 'p7' }, toys: [{ id: 7 + 100 * k }] })));
    // parents; children (paged per parent); then the children's parents and toys: 4 statements, not 1 + 100 + 300 + 300.
    expect(statements).toHaveLength(4);
  });

  it('sees CREATE TABLE and ALTER TABLE on the next request, without a restart', async () => {
    const before = await gql(server, '{ fresh { id } }');
    expect(before.body.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
    await sql(server, 'CREATE TABLE fresh (id INT PRIMARY KEY)');
    await sql(server, 'INSERT INTO fresh VALUES (1)');
    expect(await data(server, '{ fresh { id } }')).toEqual({ fresh: [{ id: 1 }] });
    await sql(server, "ALTER TABLE fresh ADD COLUMN note TEXT DEFAULT 'hi'");
    expect(await data(server, '{ fresh { id note } }')).toEqual({ fresh: [{ id: 1, note: 'hi' }] });
    await sql(server, 'DROP TABLE fresh');
    expect((await gql(server, '{ fresh { id } }')).body.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
  });

  it('serves views as read-only tables (no _by_pk)', async () => {
    await sql(server, 'CREATE VIEW big_parents AS SELECT id, name FROM parents WHERE id >= 98');
    expect(await data(server, '{ big_parents(order_by: {id: asc}) { id name } }')).toEqual({
      big_parents: [
        { id: 98, name: 'p98' },
        { id: 99, name: 'p99' },
      ],
    });
    expect((await gql(server, '{ big_parents_by_pk(id: 98) { id } }')).body.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
  });

  it('maps names that are not valid GraphQL names, and never fails to build', async () => {
    await sql(server, 'CREATE TABLE "my-table" ("1st col" INT PRIMARY KEY, "__secret" TEXT, "héllo wörld" TEXT, "_and" INT, "true" INT)');
    await sql(server, 'CREATE TABLE "my_table" (id INT PRIMARY KEY)');
    await sql(server, 'CREATE TABLE "String" (id INT PRIMARY KEY)');
    await sql(server, `INSERT INTO "my-table" VALUES (1, 's', 'h', 2, 3)`);
    const d = await data(server, '{ my_table { x1st_col x__secret h_llo_w_rld _and_2 true } my_table_2 { id } String_2 { id } }');
    expect(d.my_table).toEqual([{ x1st_col: 1, x__secret: 's', h_llo_w_rld: 'h', _and_2: 2, true: 3 }]);
    const filtered = await data(server, '{ my_table(where: {x1st_col: {_eq: 1}}, order_by: {h_llo_w_rld: asc}) { x1st_col } }');
    expect(filtered.my_table).toHaveLength(1);
  });

  it('round-trips every SQL type', async () => {
    await sql(
      server,
      `CREATE TABLE typed (id INT PRIMARY KEY, b BOOLEAN, s SMALLINT, i INTEGER, big BIGINT, num NUMERIC(20,4), r REAL, d DOUBLE PRECISION,
      t TEXT, v VARCHAR(10), c CHAR(3), u UUID, j JSONB, ts TIMESTAMP, tz TIMESTAMPTZ, dt DATE, vec VECTOR(3))`,
    );
    await sql(
      server,
      `INSERT INTO typed VALUES (1, true, 7, 70000, 9007199254740993, 12345678901234.5678, 1.5, 2.25, 'text', 'var', 'ab',
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{"k": [1, "x", null]}', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02', '2024-02-29', '[1,2,3]')`,
    );
    const fields = 'id b s i big num r d t v c u j ts tz dt vec';
    const d = await data(server, `{ typed { ${fields} } }`);
    const row = d.typed[0];
    expect(row).toEqual({
      id: 1,
      b: true,
      s: 7,
      i: 70000,
      big: '9007199254740993',
      num: '12345678901234.5678',
      r: 1.5,
      d: 2.25,
      t: 'text',
      v: 'var',
      c: 'ab ',
      u: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      j: { k: [1, 'x', null] },
      ts: '2024-01-02T03:04:05.123456Z',
      tz: '2024-01-02T01:04:05Z',
      dt: '2024-02-29',
      vec: [1, 2, 3],
    });
    // Every value read back is accepted as input and finds the row again.
    for (const column of ['b', 's', 'i', 'big', 'num', 'r', 'd', 't', 'v', 'c', 'u', 'ts', 'tz', 'dt']) {
      const found = await gql(server, `query($x: ${column === 'big' ? 'bigint' : typeOf(column)}) { typed(where: {${column}: {_eq: $x}}) { id } }`, {
        x: row[column],
      });
      expect(found.body, column).toEqual({ data: { typed: [{ id: 1 }] } });
    }
    const sdl = await data(server, '{ _service { sdl } }');
    expect(sdl._service.sdl).toContain('big: bigint');
  });

  it('finds nearest rows by a vector column through its hnsw index', async () => {
    await sql(server, 'CREATE TABLE docs (id INT PRIMARY KEY, kind TEXT, embedding VECTOR(2))');
    await sql(server, 'CREATE INDEX docs_hnsw ON docs USING hnsw (embedding vector_l2_ops)');
    await sql(server, "INSERT INTO docs VALUES (1, 'a', '[0,0]'), (2, 'b', '[1,1]'), (3, 'a', '[5,5]'), (4, 'a', '[1.2,1]')");
    const d = await data(server, '{ docs_nearest(vector: [1, 1], k: 2) { id } only_a: docs_nearest(vector: [1, 1], k: 2, where: {kind: {_eq: "a"}}) { id } }');
    expect(d).toEqual({ docs_nearest: [{ id: 2 }, { id: 4 }], only_a: [{ id: 4 }, { id: 1 }] });
  });

  it('is a federation subgraph: _service { sdl } with @key on primary keys, and _entities', async () => {
    const d = await data(server, '{ _service { sdl } }');
    expect(d._service.sdl).toContain('type parents @key(fields: "id")');
    const entities = await data(server, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on parents { name } ... on children { n } } }', {
      r: [
        { __typename: 'parents', id: 3 },
        { __typename: 'children', id: '5' },
        { __typename: 'parents', id: 999 },
      ],
    });
    expect(entities._entities).toEqual([{ name: 'p3' }, { n: 5 }, null]);
  });
});

function typeOf(column: string): string {
  const map: Record<string, string> = {
    b: 'Boolean',
    s: 'Int',
    i: 'Int',
    num: 'numeric',
    r: 'Float',
    d: 'float8',
    t: 'String',
    v: 'String',
    c: 'String',
    u: 'uuid',
    ts: 'timestamp',
    tz: 'timestamptz',
    dt: 'date',
  };
  return map[column]!;
}
