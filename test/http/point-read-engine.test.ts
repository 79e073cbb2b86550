import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMA, DEFAULT_TENANT } from '../../core/catalog.js';
import { silentLogger } from '../../core/logger.js';
import { SqlEngine, typeSystem, type JsonRow } from '../../query/index.js';
import { idTextKey } from '../../query/point-read.js';
import { openStack, tempDir, type Stack } from '../helpers/stack.js';

/**
 * SqlEngine.readByKey (query/point-read.ts), the direct read behind GET /tables/{t}/rows/{id}: which
 * tables and keys it answers itself (a row, or null for none), which it leaves to SQL (undefined),
 * and that what it answers is what `SELECT ... WHERE pk = $1` gives.
 */
describe('readByKey: the direct primary-key read', () => {
  let dir: { dir: string; remove: () => Promise<void> };
  let stack: Stack;
  let engine: SqlEngine;
  const options = { tenant: DEFAULT_TENANT, timeoutMs: 10_000, maxRows: 10 };
  const sql = (text: string, params: unknown[] = []) => engine.execute(text, { ...options, params });
  const tableDef = (name: string) => stack.projections.catalog.tableByName(DEFAULT_TENANT, DEFAULT_SCHEMA, name)!.def;
  const read = (name: string, key: string[], columns?: string[]): Promise<JsonRow | null | undefined> => {
    const table = tableDef(name);
    return Promise.resolve(engine.readByKey({ table, key, columns: columns ?? table.columns.map((c) => c.name) }));
  };

  beforeAll(async () => {
    dir = await tempDir('svcdb-point-read-');
    stack = await openStack(dir.dir);
    engine = new SqlEngine({ projections: stack.projections, types: typeSystem, logger: silentLogger });
    await sql(`CREATE TABLE every (id INTEGER PRIMARY KEY, b BOOLEAN, big BIGINT, n NUMERIC(12,3), f4 REAL, f8 DOUBLE PRECISION, t TEXT, c CHAR(4),
      u UUID, j JSONB, ts TIMESTAMP, tz TIMESTAMPTZ, d DATE, v VECTOR(2))`);
    await sql(`INSERT INTO every VALUES (1, true, 9007199254740993, 1.5, 0.1, 0.1, 'x', 'ab', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '{"b":1,"a":[2]}',
      '2024-01-02 03:04:05.6', '2024-01-02 03:04:05.6+01', '2024-01-02', '[1,2]'), (2, NULL, NULL, NULL, 'Infinity', 'NaN', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`);
  });
  afterAll(async () => {
    await stack?.close();
    await dir?.remove();
  });

  it('answers a supported key itself, with what SQL gives, in the column order asked', async () => {
    for (const id of ['1', '2']) {
      const direct = await read('every', [id]);
      expect(direct).not.toBeUndefined();
      const viaSql = (await sql('SELECT * FROM every WHERE id = $1', [id])).rows[0];
      expect(JSON.stringify(direct)).toBe(JSON.stringify(viaSql));
    }
    const some = await read('every', ['1'], ['tz', 'id', 'j']);
    expect(JSON.stringify(some)).toBe(JSON.stringify((await sql('SELECT tz, id, j FROM every WHERE id = 1')).rows[0]));
    expect(await read('every', ['3'])).toBeNull();
  });

  it('leaves to SQL what it cannot answer exactly: an id SQL refuses, other key types, views', async () => {
    expect(await read('every', ['abc'])).toBeUndefined();
    expect(await read('every', ['99999999999'])).toBeUndefined(); // integer out of range: SQL's own error
    expect(await read('every', ['1', '2'])).toBeUndefined();
    await sql('CREATE TABLE num_key (k NUMERIC PRIMARY KEY)');
    await sql('CREATE TABLE float_key (k DOUBLE PRECISION PRIMARY KEY)');
    await sql('CREATE TABLE char_key (k CHAR(3) PRIMARY KEY)');
    await sql('CREATE TABLE ts_key (k TIMESTAMPTZ PRIMARY KEY)');
    await sql('CREATE VIEW every_view AS SELECT * FROM every');
    for (const name of ['num_key', 'float_key', 'char_key', 'ts_key']) expect(await read(name, ['1'])).toBeUndefined();
    expect(await engine.readByKey({ table: tableDef('every_view'), key: ['1'], columns: ['id'] })).toBeUndefined();
  });

  it('answers text, uuid, bigint and composite keys itself', async () => {
    await sql('CREATE TABLE keys_mix (a BIGINT, b TEXT, c UUID, v INTEGER, PRIMARY KEY (a, b, c))');
    await sql("INSERT INTO keys_mix VALUES (-5, 'é,x', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 7)");
    expect(await read('keys_mix', ['-5', 'é,x', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'])).toEqual({
      a: -5,
      b: 'é,x',
      c: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      v: 7,
    });
    expect(await read('keys_mix', ['-5', 'é,x', '00000000-0000-0000-0000-000000000000'])).toBeNull();
  });

  it('answers at once (no promise) from a store that reads synchronously', () => {
    const table = tableDef('every');
    const answer = engine.readByKey({ table, key: ['1'], columns: ['id', 't'] });
    expect(answer).not.toBeInstanceOf(Promise);
    expect(answer).toEqual({ id: 1, t: 'x' });
  });

  it('a frozen column list reused from read to read, then another list, each gives its own columns', async () => {
    const table = tableDef('every');
    const all = Object.freeze(table.columns.map((c) => c.name));
    const some = Object.freeze(['t', 'id']);
    for (let i = 0; i < 3; i++) {
      expect(Object.keys((await Promise.resolve(engine.readByKey({ table, key: ['1'], columns: all })))!)).toEqual([...all]);
      expect(await Promise.resolve(engine.readByKey({ table, key: ['1'], columns: some }))).toEqual({ t: 'x', id: 1 });
      // A list that is not frozen, changed between reads, is read again each time.
      const mutable = ['id'];
      expect(await Promise.resolve(engine.readByKey({ table, key: ['1'], columns: mutable }))).toEqual({ id: 1 });
      mutable[0] = 'b';
      expect(await Promise.resolve(engine.readByKey({ table, key: ['1'], columns: mutable }))).toEqual({ b: true });
    }
  });

  it('readTextByKey: the row as its writer writes it, kept with the cached row until the row is written', async () => {
    await sql('CREATE TABLE shared_rows (id INTEGER PRIMARY KEY, a TEXT)');
    await sql("INSERT INTO shared_rows VALUES (1, 'one')");
    const table = tableDef('shared_rows');
    const all = Object.freeze(table.columns.map((c) => c.name));
    let written = 0;
    const toText = (row: JsonRow): string => {
      written += 1;
      return JSON.stringify(row);
    };
    const text = (key: string, columns: readonly string[] = all, writer = toText) =>
      Promise.resolve(engine.readTextByKey({ table, key: [key], columns }, writer));
    expect(await text('1')).toBe('{"id":1,"a":"one"}');
    expect(await text('1')).toBe('{"id":1,"a":"one"}');
    expect(written).toBe(1);
    expect(await text('2')).toBeNull();
    expect(await text('x')).toBeUndefined();
    await sql("UPDATE shared_rows SET a = 'uno' WHERE id = 1");
    expect(await text('1')).toBe('{"id":1,"a":"uno"}');
    expect(written).toBe(2);
    // Another column list, another writer: each its own text.
    expect(await text('1', Object.freeze(['a']))).toBe('{"a":"uno"}');
    expect(await text('1', all, (row) => `<${String(row['a'])}>`)).toBe('<uno>');
    expect(await text('1')).toBe('{"id":1,"a":"uno"}');
    await sql("INSERT INTO shared_rows VALUES (2, 'two')");
    expect(await text('2')).toBe('{"id":2,"a":"two"}');
    await sql('DELETE FROM shared_rows WHERE id = 1');
    expect(await text('1')).toBeNull();
  });

  it('GET row and a point SELECT of the same columns share the row made once; an alias, another order or an ALTER never share', async () => {
    await sql('CREATE TABLE both_routes (id BIGINT PRIMARY KEY, v TEXT, n NUMERIC(6,2))');
    await sql("INSERT INTO both_routes VALUES (1, 'one', 1.5), (2, 'two', NULL)");
    let made = 0;
    const toText = (row: JsonRow): string => {
      made += 1;
      return JSON.stringify(row);
    };
    const wrap = Object.freeze({ before: '{"data":', after: '}' });
    const frame = Object.freeze({ before: '{"success":true,"data":', after: '}' });
    const all = () => Object.freeze(tableDef('both_routes').columns.map((c) => c.name));
    const get = (id: number, columns: readonly string[] = all()) =>
      engine.readTextByKey({ table: tableDef('both_routes'), key: [String(id)], columns }, toText, wrap);
    const select = (text: string, id: number) => engine.pointSelect(text, { ...options, params: [id] }, toText, frame)!.rowsText;
    /** What the general path gives (no point-read cache): the row's JSON text. */
    const expected = async (text: string, id: number) => JSON.stringify((await sql(`${text} AND true`, [id])).rows[0]);
    const star = 'SELECT * FROM both_routes WHERE id = $1';
    await sql(star, [1]); // the plan cached: pointSelect answers it
    const one = await expected(star, 1);
    const two = await expected(star, 2);
    // GET first, then the SELECT: the row is decoded, converted and written once for both.
    made = 0;
    for (let round = 0; round < 2; round++) {
      expect(get(1)).toBe(`{"data":${one}}`);
      expect(select(star, 1)).toBe(`{"success":true,"data":[${one}]}`);
    }
    // The answer's text alone (POST /query without metadata): the same text, from the same kept row.
    expect(engine.pointSelectText(star, { ...options, params: [1] }, toText, frame)).toBe(`{"success":true,"data":[${one}]}`);
    expect(engine.pointSelectText(star, { ...options, params: [3] }, toText, frame)).toBe('{"success":true,"data":[]}');
    // The SELECT first, then GET.
    for (let round = 0; round < 2; round++) {
      expect(select(star, 2)).toBe(`{"success":true,"data":[${two}]}`);
      expect(get(2)).toBe(`{"data":${two}}`);
    }
    expect(made).toBe(2);
    // A column list is shared with GET's select= of the same columns, in the same order only.
    const vn = 'SELECT v, n FROM both_routes WHERE id = $1';
    await sql(vn, [1]);
    made = 0;
    expect(select(vn, 1)).toBe(`{"success":true,"data":[${await expected(vn, 1)}]}`);
    expect(get(1, Object.freeze(['v', 'n']))).toBe(`{"data":${await expected(vn, 1)}}`);
    expect(made).toBe(1);
    const nv = 'SELECT n, v FROM both_routes WHERE id = $1';
    await sql(nv, [1]);
    expect(get(1, Object.freeze(['n', 'v']))).toBe(`{"data":${await expected(nv, 1)}}`);
    expect(made).toBe(2);
    // Names that are other columns' (aliases): the same names as GET's n,v list, other values. Never GET's text.
    const swapped = 'SELECT v AS n, n AS v FROM both_routes WHERE id = $1';
    await sql(swapped, [1]);
    const swappedText = await expected(swapped, 1);
    expect(swappedText).toBe('{"n":"one","v":' + JSON.stringify(JSON.parse(one).n) + '}');
    for (let round = 0; round < 2; round++) {
      expect(get(1, Object.freeze(['n', 'v']))).toBe(`{"data":${await expected(nv, 1)}}`);
      expect(select(swapped, 1)).toBe(`{"success":true,"data":[${swappedText}]}`);
    }
    // ALTER: a new table definition; each route's answer has the new column (nothing kept from before is sent).
    await sql('ALTER TABLE both_routes ADD COLUMN extra INTEGER DEFAULT 7');
    await sql(star, [1]);
    const altered = await expected(star, 1);
    expect(JSON.parse(altered)).toEqual({ ...JSON.parse(one), extra: 7 });
    expect(get(1)).toBe(`{"data":${altered}}`);
    expect(select(star, 1)).toBe(`{"success":true,"data":[${altered}]}`);
    // A write: both answers made again, once.
    await sql("UPDATE both_routes SET v = 'uno' WHERE id = 1");
    const updated = await expected(star, 1);
    made = 0;
    expect(select(star, 1)).toBe(`{"success":true,"data":[${updated}]}`);
    expect(get(1)).toBe(`{"data":${updated}}`);
    expect(made).toBe(1);
  });

  it('readTextByKey remembers row keys by id text: each text reads what its own parse reads, through writes and past the bound', async () => {
    await sql('CREATE TABLE by_text (id BIGINT PRIMARY KEY, a TEXT)');
    await sql('CREATE TABLE by_name (k TEXT PRIMARY KEY, a TEXT)');
    await sql("INSERT INTO by_text VALUES (1, 'one'), (10, 'ten'), (-1, 'minus'), (123456789, 'nine digits'), (1234567890, 'ten digits')");
    await sql("INSERT INTO by_name VALUES ('a', 'lower'), ('A', 'upper'), ('a ', 'spaced'), ('12', 'twelve'), ('012', 'zero twelve'), ('-5', 'minus five')");
    const tables = { by_text: tableDef('by_text'), by_name: tableDef('by_name') };
    const columns = { by_text: Object.freeze(['id', 'a']), by_name: Object.freeze(['k', 'a']) };
    const ids = {
      by_text: [
        ...['1', '01', '001', '+1', ' 1', '1 ', '10', '010', '2', '02', '-0', '0', '1.0', 'x', '', '99999999999999999999', '12345678901234'],
        ...['-1', '-01', '-', '--1', '1e3', '123456789', '0123456789', '1234567890', '-123456789', '1-'],
      ],
      by_name: ['a', 'A', 'a ', ' a', 'b', '', '12', '012', '-5', '-05', '5'],
    };
    // The reference: readByKey parses and encodes every time (no remembered key).
    const check = async (): Promise<void> => {
      for (const name of ['by_text', 'by_name'] as const) {
        for (const id of ids[name]) {
          const read = { table: tables[name], key: [id], columns: columns[name] };
          const row = await Promise.resolve(engine.readByKey(read));
          const expected = row === null || row === undefined ? row : JSON.stringify(row);
          expect(await Promise.resolve(engine.readTextByKey(read, (r) => JSON.stringify(r))), `${name} ${JSON.stringify(id)}`).toBe(expected);
        }
      }
    };
    await check();
    await check();
    await sql("UPDATE by_text SET a = 'uno' WHERE id = 1");
    await sql("INSERT INTO by_text VALUES (2, 'two')");
    await sql("DELETE FROM by_name WHERE k = 'A'");
    await check();
    expect(await Promise.resolve(engine.readTextByKey({ table: tables.by_text, key: ['02'], columns: columns.by_text }, (r) => JSON.stringify(r)))).toBe(
      '{"id":2,"a":"two"}',
    );
    // More ids than the remembered keys' bound (131,072): they start over, and read the same.
    for (let id = 0; id < 140_000; id++)
      void engine.readTextByKey({ table: tables.by_text, key: [String(id)], columns: columns.by_text }, (r) => JSON.stringify(r));
    await check();
  }, 60_000);

  it('idTextKey: a number only for the canonical text of a small integer, one key per text', () => {
    const texts = [
      '0',
      '1',
      '7',
      '10',
      '-1',
      '-12',
      '123456789',
      '-123456789',
      '1234567890',
      '01',
      '+1',
      '-0',
      '-',
      '',
      ' 1',
      '1 ',
      '1.0',
      '1e3',
      'a',
      '٣',
      '00',
    ];
    const keys = texts.map((text) => idTextKey(text));
    expect(new Set(keys).size).toBe(texts.length);
    texts.forEach((text, i) => {
      const key = keys[i];
      if (typeof key === 'number') expect(String(key)).toBe(text);
      else expect(key).toBe(text);
    });
    expect(keys.slice(0, 8)).toEqual([0, 1, 7, 10, -1, -12, 123456789, -123456789]);
  });

  it('follows ALTER TABLE: a new definition, a column added with a default', async () => {
    await sql('CREATE TABLE altered (id INTEGER PRIMARY KEY, a TEXT)');
    await sql("INSERT INTO altered VALUES (1, 'one')");
    expect(await read('altered', ['1'])).toEqual({ id: 1, a: 'one' });
    await sql('ALTER TABLE altered ADD COLUMN n INTEGER DEFAULT 42');
    expect(await read('altered', ['1'])).toEqual({ id: 1, a: 'one', n: 42 });
    await sql('ALTER TABLE altered RENAME COLUMN a TO b');
    expect(await read('altered', ['1'])).toEqual({ id: 1, b: 'one', n: 42 });
  });
});
