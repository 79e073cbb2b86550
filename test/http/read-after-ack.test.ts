import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { busyServer } from '../helpers/busy-server.js';

/**
 * A row write is answered once its record is durable, before the projections apply it
 * (projections/read-barrier.ts). Every read route must still see a write acknowledged before the
 * read was sent, from ANY connection: here the write goes over one keep-alive connection and the
 * read over another, at once, while other clients keep the group commit and the apply busy (so
 * that an acknowledged record is often not applied yet when the read arrives). Without the read
 * barrier, these reads miss the write (GET row and point SELECT from the point-read cache, scans
 * from the scan cache, counts, GraphQL, collections, vector search from the hnsw projection).
 */
describe('a write acknowledged, then read at once from another connection, by every read route', () => {
  // Sixteen clients inserting all along (busyServer): the write that is checked shares group commits and applies with theirs.
  const { writer, reader, ok } = busyServer({
    setup: [
      'CREATE TABLE acked (id INT PRIMARY KEY, v INT NOT NULL)',
      'CREATE TABLE vecs (id INT PRIMARY KEY, emb VECTOR(3))',
      'CREATE INDEX vecs_hnsw ON vecs USING hnsw (emb vector_l2_ops) WITH (m = 8, ef_construction = 32)',
    ],
  });
  const sql = async (agent: http.Agent, text: string, params: unknown[] = []): Promise<any[]> =>
    (await ok(agent, 'POST', '/api/v1/query', { sql: text, params })).data as any[];
  const graphql = async (agent: http.Agent, query: string, variables: Record<string, unknown>): Promise<any> => {
    const body = await ok(agent, 'POST', '/graphql', { query, variables });
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.data;
  };

  const ROUNDS = 120;
  /** A cached row's update is missed only while its record is not even being applied yet: more rounds. */
  const UPDATE_ROUNDS = 240;

  it('GET row, point SELECT, GraphQL by key: an update of a row read (and cached) before', async () => {
    await ok(writer, 'POST', '/api/v1/tables/acked/rows', { id: 1, v: 0 });
    for (let round = 1; round <= UPDATE_ROUNDS; round++) {
      // Warm every cache with the old value first.
      expect((await ok(reader, 'GET', '/api/v1/tables/acked/rows/1')).data).toEqual({ id: 1, v: round - 1 });
      expect(await sql(reader, 'SELECT * FROM acked WHERE id = $1', [1])).toEqual([{ id: 1, v: round - 1 }]);
      await ok(writer, 'PATCH', '/api/v1/tables/acked/rows/1', { updates: { v: round } });
      const route = round % 3;
      if (route === 0) expect((await ok(reader, 'GET', '/api/v1/tables/acked/rows/1')).data, `round ${round}`).toEqual({ id: 1, v: round });
      else if (route === 1) expect(await sql(reader, 'SELECT * FROM acked WHERE id = $1', [1]), `round ${round}`).toEqual([{ id: 1, v: round }]);
      else expect(await graphql(reader, 'query($id: Int!) { acked_by_pk(id: $id) { v } }', { id: 1 }), `round ${round}`).toEqual({ acked_by_pk: { v: round } });
    }
  }, 120_000);

  it('a scan (scan cache warm), count(*), GraphQL list: a new row', async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const id = 1000 + round;
      await sql(reader, 'SELECT id FROM acked WHERE v = $1', [id]); // the scan cache holds the table
      await ok(writer, 'POST', '/api/v1/tables/acked/rows', { id, v: id });
      const route = round % 3;
      if (route === 0) expect(await sql(reader, 'SELECT id FROM acked WHERE v = $1', [id]), `round ${round}`).toEqual([{ id }]);
      else if (route === 1) expect(await sql(reader, 'SELECT count(*) AS n FROM acked WHERE id > 1000'), `round ${round}`).toEqual([{ n: round }]);
      else expect(await graphql(reader, 'query($v: Int!) { acked(where: {v: {_eq: $v}}) { id } }', { v: id }), `round ${round}`).toEqual({ acked: [{ id }] });
    }
  }, 120_000);

  it('INSERT via POST /query, then a read of it: the same', async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const id = 5000 + round;
      await sql(writer, 'INSERT INTO acked (id, v) VALUES ($1, $2)', [id, id]);
      expect((await ok(reader, 'GET', `/api/v1/tables/acked/rows/${id}`)).data, `round ${round}`).toEqual({ id, v: id });
    }
  }, 120_000);

  it('collections: a resource created, then read by id and listed', async () => {
    // 90: a list answers at most 100 resources by default.
    for (let round = 1; round <= 90; round++) {
      const created = await ok(writer, 'POST', '/v1/api/notes', { name: `n${round}` });
      if (round % 2 === 0) expect(await ok(reader, 'GET', `/v1/api/notes/${created.id}`), `round ${round}`).toEqual(created);
      else expect(((await ok(reader, 'GET', '/v1/api/notes')) as unknown[]).length, `round ${round}`).toBe(round);
    }
  }, 120_000);

  it('a bulk vector upsert (seconds of hnsw apply) holds neither GET row nor SELECTs of another table; a vector search after it sees the vectors', async () => {
    const DIMS = 64;
    const BATCHES = 6;
    const PER_BATCH = 1000;
    // A costly graph (ef_construction 200): the vector projection's apply of these upserts takes far
    // longer than the tables projection's (a LevelDB batch of their rows).
    await sql(writer, `CREATE TABLE bulkvecs (id INT PRIMARY KEY, emb VECTOR(${DIMS}), metadata JSONB)`);
    await sql(writer, 'CREATE INDEX bulkvecs_hnsw ON bulkvecs USING hnsw (emb vector_l2_ops) WITH (m = 16, ef_construction = 200)');
    await sql(writer, 'CREATE TABLE side (id INT PRIMARY KEY, v INT NOT NULL)');
    await ok(writer, 'POST', '/api/v1/tables/side/rows', { id: 1, v: 1 });
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const vectors = Array.from({ length: BATCHES * PER_BATCH }, (_, i) => ({
      id: i + 1,
      vector: Array.from({ length: DIMS }, () => Math.round(random() * 1000) / 1000),
    }));
    const uploaders = Array.from({ length: BATCHES }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    try {
      await Promise.all(
        uploaders.map((agent, b) =>
          ok(agent, 'POST', '/api/v1/vectors/upsert', { table: 'bulkvecs', vectors: vectors.slice(b * PER_BATCH, (b + 1) * PER_BATCH) }),
        ),
      );
    } finally {
      for (const agent of uploaders) agent.destroy();
    }
    // Every upsert is answered (durable): now the reads, at once, each on its own connection.
    const searcher = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const counter = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const started = performance.now();
    const done: Record<string, number> = {};
    const timed = <T>(name: string, p: Promise<T>): Promise<T> => p.then((value) => ((done[name] = performance.now() - started), value));
    const probe = vectors[BATCHES * PER_BATCH - 1]!;
    try {
      const [search, row, point, count] = await Promise.all([
        timed('search', sql(searcher, 'SELECT id FROM bulkvecs ORDER BY emb <-> $1 LIMIT 5', [JSON.stringify(probe.vector)])),
        timed('row', ok(reader, 'GET', '/api/v1/tables/side/rows/1')),
        timed('point', sql(writer, 'SELECT * FROM side WHERE id = $1', [1])),
        timed('count', sql(counter, 'SELECT count(*)::int AS n FROM side')),
      ]);
      expect(row.data).toEqual({ id: 1, v: 1 });
      expect(point).toEqual([{ id: 1, v: 1 }]);
      expect(count).toEqual([{ n: 1 }]);
      // Read-your-writes over the hnsw graphs: the search waited for the vector apply.
      expect(search.map((r) => r.id)).toContain(probe.id);
      // The reads of `side` did not wait for that apply: each answered long before the search.
      for (const name of ['row', 'point', 'count']) expect(done[name], `${name} (${JSON.stringify(done)})`).toBeLessThan(done.search! / 2);
    } finally {
      searcher.destroy();
      counter.destroy();
    }
  }, 120_000);

  it('vector search (the hnsw projection): the row just inserted is the nearest', async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const at = `[${round * 10},${round * 10},${round * 10}]`;
      await sql(writer, 'INSERT INTO vecs VALUES ($1, $2)', [round, at]);
      expect(await sql(reader, 'SELECT id FROM vecs ORDER BY emb <-> $1 LIMIT 1', [at]), `round ${round}`).toEqual([{ id: round }]);
    }
  }, 120_000);
});
