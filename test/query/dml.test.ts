import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caught, openSql, type SqlHarness } from './helpers.js';

const code = caught;

describe('DDL and DML', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
    await h.q(
      `CREATE TABLE users (id BIGSERIAL PRIMARY KEY, email VARCHAR(50) UNIQUE NOT NULL, age INTEGER CHECK (age >= 0), created TIMESTAMP WITH TIME ZONE DEFAULT now(), uid UUID DEFAULT gen_random_uuid())`,
    );
    await h.q(
      `CREATE TABLE orders (id SERIAL PRIMARY KEY, user_id BIGINT REFERENCES users(id) ON DELETE CASCADE, total NUMERIC(10,2) NOT NULL DEFAULT 0, note TEXT)`,
    );
  });
  afterAll(async () => {
    await h.close();
  });

  it('inserts with defaults and serials', async () => {
    const r = await h.q(
      "INSERT INTO users (email, age) VALUES ('a@x', 30), ('b@x', 40) RETURNING id, email, created IS NOT NULL AS has_created, uid IS NOT NULL AS has_uid",
    );
    expect(r.rows).toEqual([
      { id: 1, email: 'a@x', has_created: true, has_uid: true },
      { id: 2, email: 'b@x', has_created: true, has_uid: true },
    ]);
    expect(r.affectedRows).toBe(2);
    expect(r.command).toBe('INSERT');
  });

  it('refuses constraint violations with PostgreSQL wording, writing nothing', async () => {
    const dup = await code(h.q("INSERT INTO users (email) VALUES ('c@x'), ('a@x')"));
    expect(dup.code).toBe('CONSTRAINT_VIOLATION');
    expect(dup.message).toBe('duplicate key value violates unique constraint "users_email_key"');
    expect(dup.details.constraint).toBe('users_email_key');
    expect(await h.rows("SELECT count(*) AS n FROM users WHERE email = 'c@x'")).toEqual([{ n: 0 }]);
    const pk = await code(h.q("INSERT INTO users (id, email) VALUES (1, 'z@x')"));
    expect(pk.message).toBe('duplicate key value violates unique constraint "users_pkey"');
    const chk = await code(h.q("INSERT INTO users (email, age) VALUES ('d@x', -1)"));
    expect(chk.message).toBe('new row for relation "users" violates check constraint "users_age_check"');
    const nn = await code(h.q('INSERT INTO users (age) VALUES (1)'));
    expect(nn.message).toBe('null value in column "email" of relation "users" violates not-null constraint');
    const fk = await code(h.q('INSERT INTO orders (user_id, total) VALUES (99, 1)'));
    expect(fk.message).toBe('insert or update on table "orders" violates foreign key constraint "orders_user_id_fkey"');
    const len = await code(h.q("INSERT INTO users (email) VALUES ('" + 'x'.repeat(60) + "')"));
    expect(len.code).toBe('TYPE_MISMATCH');
  });

  it('ON CONFLICT DO NOTHING / DO UPDATE', async () => {
    const n = await h.q("INSERT INTO users (email, age) VALUES ('a@x', 1) ON CONFLICT (email) DO NOTHING");
    expect(n.affectedRows).toBe(0);
    const u = await h.q(
      "INSERT INTO users (email, age) VALUES ('a@x', 31) ON CONFLICT (email) DO UPDATE SET age = EXCLUDED.age + users.age RETURNING email, age",
    );
    expect(u.rows).toEqual([{ email: 'a@x', age: 61 }]);
    const w = await h.q("INSERT INTO users (email, age) VALUES ('a@x', 5) ON CONFLICT (email) DO UPDATE SET age = EXCLUDED.age WHERE users.age < 10");
    expect(w.affectedRows).toBe(0);
  });

  it('UPDATE ... FROM and DELETE ... USING with RETURNING, FK cascade', async () => {
    await h.q('INSERT INTO orders (user_id, total) VALUES (1, 10), (1, 20), (2, 5)');
    const up = await h.q('UPDATE orders SET note = u.email FROM users u WHERE orders.user_id = u.id AND u.age > 50 RETURNING orders.id, note');
    expect(up.rows.sort((a, b) => Number(a.id) - Number(b.id))).toEqual([
      { id: 1, note: 'a@x' },
      { id: 2, note: 'a@x' },
    ]);
    const del = await h.q('DELETE FROM users USING orders WHERE orders.user_id = users.id AND orders.total = 5 RETURNING users.email');
    expect(del.rows).toEqual([{ email: 'b@x' }]);
    expect(await h.rows('SELECT count(*) AS n FROM orders WHERE user_id = 2')).toEqual([{ n: 0 }]);
    const upd = await h.q('UPDATE users SET age = age + 1 WHERE id = 1');
    expect(upd.affectedRows).toBe(1);
    expect(upd.command).toBe('UPDATE');
  });

  it('tables without a primary key, ALTER, views, indexes, truncate, drop', async () => {
    await h.q('CREATE TABLE logs (msg TEXT, level INT)');
    await h.q("INSERT INTO logs VALUES ('a', 1), ('b', 2), ('a', 3)");
    await h.q("UPDATE logs SET level = 10 WHERE msg = 'a'");
    expect(await h.rows('SELECT msg, level FROM logs ORDER BY level, msg')).toEqual([
      { msg: 'b', level: 2 },
      { msg: 'a', level: 10 },
      { msg: 'a', level: 10 },
    ]);
    await h.q("ALTER TABLE logs ADD COLUMN tag TEXT DEFAULT 'none'");
    expect(await h.rows('SELECT DISTINCT tag FROM logs')).toEqual([{ tag: 'none' }]);
    await h.q('ALTER TABLE logs RENAME COLUMN tag TO label');
    await h.q('ALTER TABLE logs DROP COLUMN level');
    expect(await h.rows("SELECT * FROM logs WHERE msg = 'b'")).toEqual([{ msg: 'b', label: 'none' }]);
    await h.q('CREATE INDEX logs_msg_idx ON logs (msg)');
    expect(await h.rows("SELECT count(*) AS n FROM logs WHERE msg = 'a'")).toEqual([{ n: 2 }]);
    await h.q('CREATE VIEW adults AS SELECT email, age FROM users WHERE age >= 18');
    expect(await h.rows('SELECT email FROM adults')).toEqual([{ email: 'a@x' }]);
    const dupIdx = await code(h.q('CREATE UNIQUE INDEX logs_msg_u ON logs (msg)'));
    expect(dupIdx.code).toBe('CONSTRAINT_VIOLATION');
    await h.q('ALTER TABLE logs ADD CONSTRAINT logs_msg_check CHECK (length(msg) < 5)');
    const chk = await code(h.q("INSERT INTO logs (msg) VALUES ('toolong')"));
    expect(chk.message).toContain('logs_msg_check');
    await h.q('TRUNCATE logs');
    expect(await h.rows('SELECT count(*) AS n FROM logs')).toEqual([{ n: 0 }]);
    const fkDrop = await code(h.q('DROP TABLE users'));
    expect(fkDrop.code).toBe('CONSTRAINT_VIOLATION');
    await h.q('DROP VIEW adults');
    await h.q('DROP TABLE users CASCADE');
    await h.q('DROP TABLE IF EXISTS users, nothing_here');
    const gone = await code(h.q('SELECT * FROM users'));
    expect(gone).toMatchObject({ code: 'TABLE_NOT_FOUND', message: 'relation "users" does not exist' });
  });

  it('vector, jsonb and hnsw DDL', async () => {
    await h.q('CREATE TABLE items (id INT PRIMARY KEY, emb VECTOR(3), meta JSONB)');
    await h.q('CREATE INDEX items_emb ON items USING hnsw (emb) WITH (m = 16, ef_construction = 64)');
    await h.q("INSERT INTO items VALUES (1, '[1,2,3]', '{\"a\": 1}'), (2, '[0,0,1]', '{\"a\": 2, \"b\": [1]}')");
    expect(await h.rows("SELECT id, meta->>'a' AS a FROM items WHERE meta @> '{\"a\": 2}'")).toEqual([{ id: 2, a: '2' }]);
    const table = [...h.stack.projections.catalog.tables()].find((t) => t.def.name === 'items')!.def;
    expect(table.indexes.find((i) => i.name === 'items_emb')).toMatchObject({ kind: 'hnsw', options: { m: 16, ef_construction: 64 } });
    expect(table.columns[1]!.type).toEqual({ name: 'vector', dimension: 3 });
  });
  it('bulk INSERT: read-ahead checks keep per-row semantics (in-batch duplicates, missing parents, NULLs)', async () => {
    await h.q('CREATE TABLE bg (id INTEGER PRIMARY KEY)');
    await h.q('INSERT INTO bg VALUES (0), (1), (2)');
    await h.q('CREATE TABLE bt (id BIGINT PRIMARY KEY, email TEXT UNIQUE, grp INTEGER REFERENCES bg(id))');
    const values = (from: number, n: number, row: (i: number) => string = (i) => `(${i}, 'u${i}@x', ${i % 3})`): string =>
      Array.from({ length: n }, (_, j) => row(from + j)).join(', ');
    await h.q(`INSERT INTO bt VALUES ${values(0, 100)}`);
    const inBatch = await code(h.q(`INSERT INTO bt VALUES ${values(100, 100, (i) => `(${i}, 'u${i === 150 ? 110 : i}@x', 0)`)}`));
    expect(inBatch.message).toBe('duplicate key value violates unique constraint "bt_email_key"');
    const existing = await code(h.q(`INSERT INTO bt VALUES ${values(100, 100, (i) => `(${i}, 'u${i === 180 ? 5 : i}@x', 0)`)}`));
    expect(existing.message).toBe('duplicate key value violates unique constraint "bt_email_key"');
    const pk = await code(h.q(`INSERT INTO bt VALUES ${values(100, 100, (i) => `(${i === 160 ? 120 : i}, 'u${i}@x', 0)`)}`));
    expect(pk.message).toBe('duplicate key value violates unique constraint "bt_pkey"');
    const fk = await code(h.q(`INSERT INTO bt VALUES ${values(100, 100, (i) => `(${i}, 'u${i}@x', ${i === 170 ? 9 : 1})`)}`));
    expect(fk.message).toBe('insert or update on table "bt" violates foreign key constraint "bt_grp_fkey"');
    expect(await h.rows('SELECT count(*) AS n FROM bt')).toEqual([{ n: 100 }]);
    await h.q(`INSERT INTO bt VALUES ${values(100, 50, (i) => `(${i}, NULL, NULL)`)}`);
    const r = await h.q(
      `INSERT INTO bt VALUES ${values(95, 60, (i) => `(${i === 154 ? 200 : i}, 'u${i === 154 ? 99 : i}@x', 2)`)} ON CONFLICT DO NOTHING RETURNING id`,
    );
    expect(r.rows).toEqual([150, 151, 152, 153].map((id) => ({ id })));
    expect(await h.rows('SELECT count(*) AS n FROM bt')).toEqual([{ n: 154 }]);
  });
});
