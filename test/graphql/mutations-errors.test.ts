/**
 * GraphQL mutations that must fail, each with svcdb's code in extensions.code and nothing
 * written (checked through SQL), while the server keeps serving: a read_only key, constraint
 * violations, wrong variable types, unsafe input, and a table dropped under a mutation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, newKey } from '../helpers/auth.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { data, gql, sql } from './client.js';

let server: TestServer;

async function rows(text: string): Promise<Record<string, unknown>[]> {
  return (await server.sql.execute(text, { params: [], timeoutMs: 10_000, maxRows: 10_000, tenant: 'default' })).rows;
}

/** The one error of a failed mutation: data null, nothing else. */
async function failure(
  query: string,
  variables?: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<{ status: number; code: string; message: string }> {
  const reply = await gql(server, query, variables, headers);
  expect(reply.body.data ?? null).toBeNull();
  expect(reply.body.errors).toHaveLength(1);
  return { status: reply.status, code: reply.body.errors[0].extensions.code, message: reply.body.errors[0].message };
}

beforeAll(async () => {
  server = await startTestServer();
  await sql(server, 'CREATE TABLE teams (id INT PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
  await sql(
    server,
    'CREATE TABLE players (id INT PRIMARY KEY, team_id INT REFERENCES teams(id), name TEXT NOT NULL, age INT CHECK (age >= 16), at TIMESTAMPTZ)',
  );
  await sql(server, "INSERT INTO teams VALUES (1, 'Reds'), (2, 'Blues')");
  await sql(server, "INSERT INTO players VALUES (1, 1, 'Ann', 20, NULL)");
});

afterAll(async () => {
  await server?.close();
});

describe('GraphQL mutation failures', () => {
  it('a read_only key gets AUTHORIZATION_DENIED and writes nothing; it may still query', async () => {
    const { key } = await newKey(server.dataDir, { role: 'read_only' });
    const headers = { authorization: `Bearer ${key}` };
    await eventually(async () => (await gql(server, '{ teams { id } }', undefined, headers)).status === 200);
    const denied = await failure(
      'mutation { insert_teams_one(object: {id: 3, name: "Greens"}) { id } delete_players(where: {}) { affected_rows } }',
      undefined,
      headers,
    );
    expect(denied.code).toBe('AUTHORIZATION_DENIED');
    expect([200, 403]).toContain(denied.status);
    expect(await rows('SELECT count(*) AS c FROM teams')).toEqual([{ c: 2 }]);
    expect(await rows('SELECT count(*) AS c FROM players')).toEqual([{ c: 1 }]);
    expect((await data(server, '{ teams(order_by: {id: asc}) { name } }', undefined, headers)).teams).toEqual([{ name: 'Reds' }, { name: 'Blues' }]);
  });

  it('unique, NOT NULL, foreign key and CHECK violations are CONSTRAINT_VIOLATION, and nothing of the request is written', async () => {
    const cases: [string, string][] = [
      ['insert_teams(objects: [{id: 3, name: "Greens"}, {id: 4, name: "Reds"}]) { affected_rows }', 'teams_name_key'],
      ['insert_players_one(object: {id: 2, name: null}) { id }', 'players_name_not_null'],
      ['update_players_by_pk(pk_columns: {id: 1}, _set: {team_id: 42}) { id }', 'players_team_id_fkey'],
      ['update_players(where: {}, _inc: {age: -10}) { affected_rows }', 'players_age_check'],
      ['delete_teams_by_pk(id: 1) { id }', 'players_team_id_fkey'],
    ];
    for (const [field, constraint] of cases) {
      const reply = await gql(server, `mutation { insert_teams_one(object: {id: 9, name: "Nines"}) { id } ${field} }`);
      expect(reply.body.data, field).toBeNull();
      expect(reply.body.errors[0].extensions.code, field).toBe('CONSTRAINT_VIOLATION');
      expect(reply.body.errors[0].extensions.details.constraint, field).toBe(constraint);
    }
    expect(await rows('SELECT id, name FROM teams ORDER BY id')).toEqual([
      { id: 1, name: 'Reds' },
      { id: 2, name: 'Blues' },
    ]);
    expect(await rows('SELECT id, team_id, name, age FROM players')).toEqual([{ id: 1, team_id: 1, name: 'Ann', age: 20 }]);
  });

  it('wrong variable types are refused before anything runs', async () => {
    const insert = 'mutation($rows: [teams_insert_input!]!) { insert_teams(objects: $rows) { affected_rows } }';
    for (const bad of [[{ id: 'three', name: 'x' }], [{ id: 3, name: 7 }], [{ id: 3, colour: 'red' }], 'not a list of objects']) {
      const reply = await gql(server, insert, { rows: bad });
      expect(reply.body.data ?? null, JSON.stringify(bad)).toBeNull();
      expect(reply.body.errors[0].extensions.code, JSON.stringify(bad)).toBe('VALIDATION_ERROR');
    }
    const time = await failure('mutation($at: timestamptz) { update_players_by_pk(pk_columns: {id: 1}, _set: {at: $at}) { id } }', { at: 'not a time' });
    expect(time.code).toBe('TYPE_MISMATCH');
    expect(await rows('SELECT count(*) AS c FROM teams')).toEqual([{ c: 2 }]);
  });

  it('refuses input that would silently change more than asked', async () => {
    const cases: [string, string][] = [
      ['delete_players(where: {name: {_eq: null}}) { affected_rows }', '_is_null'],
      ['update_players(where: {}, _set: {}) { affected_rows }', '_set or _inc'],
      ['update_players(where: {id: {_eq: 1}}, _set: {age: 30}, _inc: {age: 1}) { affected_rows }', 'both'],
      [
        'insert_players(objects: [{id: 1, name: "B"}], on_conflict: {constraint: players_pkey, update_columns: [name], where: {teams: {name: {_eq: "Reds"}}}}) { affected_rows }',
        'relation',
      ],
    ];
    for (const [field, words] of cases) {
      const { code, message } = await failure(`mutation { ${field} }`);
      expect(code, field).toBe('VALIDATION_ERROR');
      expect(message, field).toContain(words);
    }
    const missing = await gql(server, 'mutation { delete_players { affected_rows } }');
    expect(missing.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await rows('SELECT count(*) AS c FROM players')).toEqual([{ c: 1 }]);
  });

  it('a commit that conflicts with a concurrent write is TRANSACTION_CONFLICT, and nothing of the request is written', async () => {
    const engine = server.sql as unknown as { execute: (text: string, ...rest: unknown[]) => Promise<unknown> };
    const original = engine.execute;
    let updates = 0;
    // Another client updates team 1 after this request's last statement ran, before it commits.
    engine.execute = async function (this: unknown, text: string, ...rest: unknown[]) {
      const result = await original.call(this, text, ...rest);
      if (text.startsWith('UPDATE "public"."teams"') && ++updates === 2)
        await original.call(this, "UPDATE teams SET name = 'Other' WHERE id = 1", { params: [], timeoutMs: 10_000, maxRows: 10, tenant: 'default' });
      return result;
    };
    let reply;
    try {
      reply = await gql(
        server,
        'mutation { a: update_teams_by_pk(pk_columns: {id: 1}, _set: {name: "Mine"}) { id } b: update_teams_by_pk(pk_columns: {id: 2}, _set: {name: "Mine too"}) { id } }',
        undefined,
        { accept: 'application/graphql-response+json' },
      );
    } finally {
      engine.execute = original;
    }
    // Every field ran; the commit was refused: data null, the commit's error (no path), status 200.
    expect(reply.status).toBe(200);
    expect(reply.body.data).toBeNull();
    expect(reply.body.errors).toHaveLength(1);
    expect(reply.body.errors[0].extensions.code).toBe('TRANSACTION_CONFLICT');
    expect(reply.body.errors[0].path).toBeUndefined();
    expect(await rows('SELECT id, name FROM teams ORDER BY id')).toEqual([
      { id: 1, name: 'Other' },
      { id: 2, name: 'Blues' },
    ]);
    await sql(server, "UPDATE teams SET name = 'Reds' WHERE id = 1");
  });

  it('a table dropped after the schema was built: TABLE_NOT_FOUND (or a conflict mid-transaction), nothing written, then the field is gone', async () => {
    // The table is dropped just before the request's statement on it runs.
    const dropUnder = async (table: string, query: string) => {
      await sql(server, `CREATE TABLE ${table} (id INT PRIMARY KEY)`);
      await data(server, `{ ${table} { id } }`); // the schema with the table is built
      const engine = server.sql as unknown as { execute: (text: string, ...rest: unknown[]) => Promise<unknown> };
      const original = engine.execute;
      engine.execute = async function (this: unknown, text: string, ...rest: unknown[]) {
        if (text.startsWith(`INSERT INTO "public"."${table}"`))
          await original.call(this, `DROP TABLE ${table}`, { params: [], timeoutMs: 10_000, maxRows: 10, tenant: 'default' });
        return original.call(this, text, ...rest);
      };
      try {
        const reply = await gql(server, query);
        expect(reply.body.data).toBeNull();
        return reply.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code);
      } finally {
        engine.execute = original;
      }
    };
    expect(
      await dropUnder('scratch', 'mutation { insert_scratch_one(object: {id: 1}) { id } insert_teams_one(object: {id: 5, name: "Golds"}) { id } }'),
    ).toEqual(['TABLE_NOT_FOUND']);
    // After the request's transaction wrote, a DDL commit conflicts with it (the engine's rule).
    expect(
      await dropUnder('scratch2', 'mutation { insert_teams_one(object: {id: 5, name: "Golds"}) { id } insert_scratch2_one(object: {id: 1}) { id } }'),
    ).toEqual(['TRANSACTION_CONFLICT']);
    expect(await rows('SELECT count(*) AS c FROM teams')).toEqual([{ c: 2 }]);
    // The next request has a schema without it: the field is unknown, refused before any SQL.
    const next = await gql(server, 'mutation { insert_scratch_one(object: {id: 1}) { id } }');
    expect(next.body.data ?? null).toBeNull();
    expect(next.body.errors[0].extensions.code).toBe('TABLE_NOT_FOUND');
    expect((await data(server, 'mutation { insert_teams_one(object: {id: 5, name: "Golds"}) { id } }')).insert_teams_one).toEqual({ id: 5 });
  });
});
