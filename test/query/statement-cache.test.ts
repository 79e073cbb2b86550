import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SQL_LIMITS } from '../../query/index.js';
import { caught, openSql, type SqlHarness } from './helpers.js';

// The engine keeps parsed statements by text (query/parse-cache.ts) and a SELECT's row converter with its plan:
// a statement sent again must mean what the catalog says now, with this call's parameters.
describe('statements sent again', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql({ limits: { ...DEFAULT_SQL_LIMITS, queryTextBytesMax: 300 } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('an INSERT without a column list follows ALTER TABLE ADD COLUMN', async () => {
    await h.q('CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT)');
    const insert = 'INSERT INTO a VALUES ($1, $2) RETURNING *';
    expect((await h.q(insert, [1, 'x'])).rows).toEqual([{ id: 1, v: 'x' }]);
    await h.q("ALTER TABLE a ADD COLUMN w TEXT DEFAULT 'dflt'");
    expect((await h.q(insert, [2, 'y'])).rows).toEqual([{ id: 2, v: 'y', w: 'dflt' }]);
    expect(await h.rows('SELECT * FROM a ORDER BY id')).toEqual([
      { id: 1, v: 'x', w: 'dflt' },
      { id: 2, v: 'y', w: 'dflt' },
    ]);
  });

  it('an INSERT and a SELECT follow DROP TABLE + CREATE TABLE with other types', async () => {
    const insert = 'INSERT INTO b (id, n) VALUES ($1, $2)';
    const select = 'SELECT id, n FROM b WHERE id = $1';
    await h.q('CREATE TABLE b (id INTEGER PRIMARY KEY, n INTEGER)');
    await h.q(insert, [1, '41']);
    expect(await h.rows(select, [1])).toEqual([{ id: 1, n: 41 }]);
    await h.q('DROP TABLE b');
    await h.q('CREATE TABLE b (id TEXT PRIMARY KEY, n NUMERIC(6,2))');
    await h.q(insert, ['one', 41]);
    expect(await h.rows(select, ['one'])).toEqual([{ id: 'one', n: '41.00' }]);
    // The old INTEGER column is gone: a fraction is kept as NUMERIC(6,2) keeps it.
    await h.q(insert, ['two', 41.5]);
    expect(await h.rows(select, ['two'])).toEqual([{ id: 'two', n: '41.50' }]);
  });

  it('takes parameters of different JSON types per call', async () => {
    await h.q('CREATE TABLE p (id BIGINT PRIMARY KEY, n INTEGER, t TEXT)');
    const insert = 'INSERT INTO p (id, n, t) VALUES ($1, $2, $3)';
    await h.q(insert, [1, 5, 'a']);
    await h.q(insert, ['2', '6', '7']);
    await h.q(insert, [3, null, null]);
    expect(await h.rows('SELECT * FROM p ORDER BY id')).toEqual([
      { id: 1, n: 5, t: 'a' },
      { id: 2, n: 6, t: '7' },
      { id: 3, n: null, t: null },
    ]);
    const sum = 'SELECT $1::int + n AS s FROM p WHERE id = $2';
    expect(await h.rows(sum, [10, 1])).toEqual([{ s: 15 }]);
    expect(await h.rows(sum, ['20', '2'])).toEqual([{ s: 26 }]);
  });

  it('runs each kind of statement again with the same answers (a shared parse is never changed)', async () => {
    await h.q('CREATE TABLE k (id INTEGER PRIMARY KEY, g INTEGER, n INTEGER)');
    const texts: [string, unknown[]][] = [
      ['INSERT INTO k AS x VALUES ($1, $1 % 3, 0) ON CONFLICT (id) DO UPDATE SET n = x.n + 1 RETURNING id, n', [4]],
      ['UPDATE k SET n = n + 10 WHERE id = $1 RETURNING n', [4]],
      ['SELECT g, count(*) AS c, sum(n) AS s FROM k WHERE id > $1 GROUP BY g ORDER BY g', [0]],
      ['WITH w AS (SELECT id FROM k) SELECT k.id FROM k JOIN w ON w.id = k.id WHERE k.id IN (SELECT id FROM k WHERE g = $1)', [1]],
      ['INSERT INTO k VALUES (100, 1, 1); DELETE FROM k WHERE id = 100 RETURNING id', []],
    ];
    const first = [];
    for (const [sql, params] of texts) first.push((await h.q(sql, params)).rows);
    const second = [];
    for (const [sql, params] of texts) second.push((await h.q(sql, params)).rows);
    expect(first[0]).toEqual([{ id: 4, n: 0 }]);
    expect(second[0]).toEqual([{ id: 4, n: 11 }]);
    expect(second[1]).toEqual([{ n: 21 }]);
    expect(first[2]).toEqual([{ g: 1, c: 1, s: 10 }]);
    expect(second[2]).toEqual([{ g: 1, c: 1, s: 21 }]);
    expect(second[3]).toEqual([{ id: 4 }]);
    expect(second[3]).toEqual(first[3]);
    expect(second[4]).toEqual([{ id: 100 }]);
  });

  it('cuts a SELECT at maxRows and says so only when a row was left', async () => {
    await h.q('CREATE TABLE m (id INTEGER PRIMARY KEY)');
    await h.q('INSERT INTO m SELECT g FROM generate_series(1, 5) AS g');
    const run = (maxRows: number) => h.engine.execute('SELECT id FROM m ORDER BY id', { params: [], timeoutMs: 30_000, maxRows, tenant: 'default' });
    expect(await run(5)).toMatchObject({ command: 'SELECT', rowCount: 5, truncated: false, affectedRows: null });
    const cut = await run(4);
    expect(cut).toMatchObject({ rowCount: 4, truncated: true });
    expect(cut.rows.map((r) => r.id)).toEqual([1, 2, 3, 4]);
    expect(cut.columns).toEqual([{ name: 'id', type: 'INTEGER', nullable: false }]);
    expect((await h.engine.execute('SELECT id FROM m WHERE id = $1', { params: [9], timeoutMs: 30_000, maxRows: 1, tenant: 'default' })).rows).toEqual([]);
  });

  it('a syntax error is reported every time the text is sent', async () => {
    for (let i = 0; i < 2; i++) expect((await caught(h.q('SELEC 1'))).code).toBe('INVALID_QUERY');
  });

  it('counts bytes of multi-byte text against queryTextBytesMax only when they might exceed it', async () => {
    // 100 chars * 3 bytes = 300: at the limit; 101 chars of 'é' = 202 bytes; 'ï' x 150 = 300 bytes, x 151 over.
    expect(await h.rows(`SELECT '${'é'.repeat(90)}' AS s`)).toHaveLength(1);
    const over = await caught(h.q(`SELECT '${'é'.repeat(150)}' AS s`));
    expect(over.code).toBe('LIMIT_EXCEEDED');
    expect(over.details.max_query_size_bytes).toBe(300);
    expect((await caught(h.q(`SELECT '${'x'.repeat(300)}' AS s`))).code).toBe('LIMIT_EXCEEDED');
  });
});

describe('rows keyed by bytes above 0x7f', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(async () => {
    await h.close();
  });

  // Negative integers and non-ASCII text encode to key bytes of every value: the writer's maps must tell them apart.
  it('finds duplicates, conflicts and moved keys among them', async () => {
    await h.q('CREATE TABLE u (id BIGINT PRIMARY KEY, name TEXT UNIQUE, n INTEGER)');
    await h.q("INSERT INTO u VALUES (-1, 'é', 1), (-256, 'ÿ', 2), (255, 'Ā', 3), (-9223372036854775808, '€', 4)");
    const dup = await caught(h.q("INSERT INTO u VALUES (-2, 'ÿ', 5)"));
    expect(dup.message).toBe('duplicate key value violates unique constraint "u_name_key"');
    const inStatement = await caught(h.q("INSERT INTO u VALUES (-3, 'ü', 5), (-3, 'ö', 6)"));
    expect(inStatement.message).toBe('duplicate key value violates unique constraint "u_pkey"');
    // A bulk insert reads its keys ahead (prefetch): a row already stored is found among them.
    const bulk = (last: number): string =>
      `INSERT INTO u SELECT -1000 - g, 'bulk' || g, g FROM generate_series(1, 200) AS g UNION ALL SELECT ${last}, 'last', 0`;
    expect((await caught(h.q(bulk(255)))).message).toBe('duplicate key value violates unique constraint "u_pkey"');
    expect((await caught(h.q(bulk(-1005)))).message).toBe('duplicate key value violates unique constraint "u_pkey"');
    expect(await h.rows('SELECT count(*) AS c FROM u')).toEqual([{ c: 4 }]);
    await h.q("INSERT INTO u VALUES (-256, 'x', 0) ON CONFLICT (id) DO UPDATE SET n = u.n + 100");
    await h.q('UPDATE u SET id = id - 1 WHERE id < 0 AND id > -1000');
    await h.q("UPDATE u SET name = name || 'ÿ' WHERE id IN (-2, -257)");
    expect((await caught(h.q("UPDATE u SET name = 'éÿ' WHERE id = 255"))).message).toBe('duplicate key value violates unique constraint "u_name_key"');
    expect(await h.rows('SELECT id, name, n FROM u ORDER BY id')).toEqual([
      { id: '-9223372036854775808', name: '€', n: 4 },
      { id: -257, name: 'ÿÿ', n: 102 },
      { id: -2, name: 'éÿ', n: 1 },
      { id: 255, name: 'Ā', n: 3 },
    ]);
  });
});

describe('long keys', () => {
  let h: SqlHarness;
  beforeAll(async () => {
    h = await openSql();
  });
  afterAll(async () => {
    await h.close();
  });

  // Keys of more than 64 bytes take the writer's other path to a map key: the same answers.
  it('tells long non-ASCII keys apart and finds their duplicates', async () => {
    await h.q('CREATE TABLE l (id TEXT PRIMARY KEY, tag TEXT UNIQUE)');
    const long = (c: string, n: number): string => c.repeat(n);
    await h.q('INSERT INTO l VALUES ($1, $2), ($3, $4)', [long('é', 60), long('ÿ', 70), long('é', 61), long('ÿ', 71)]);
    const dup = await caught(h.q('INSERT INTO l VALUES ($1, $2), ($1, $3)', [long('ü', 80), 'a', 'b']));
    expect(dup.message).toBe('duplicate key value violates unique constraint "l_pkey"');
    const tag = await caught(h.q('INSERT INTO l VALUES ($1, $2)', [long('ö', 80), long('ÿ', 71)]));
    expect(tag.message).toBe('duplicate key value violates unique constraint "l_tag_key"');
    await h.q('INSERT INTO l VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET tag = $3', [long('é', 61), 'x', 'moved']);
    expect(await h.rows('SELECT length(id) AS n, tag FROM l ORDER BY id')).toEqual([
      { n: 60, tag: long('ÿ', 70) },
      { n: 61, tag: 'moved' },
    ]);
  });
});
