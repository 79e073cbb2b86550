import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';
import { api, bearer, newKey } from '../helpers/auth.js';

/** REST transactions end to end: lifecycle, isolation anomalies per level, conflicts, expiry. */
describe('/api/v1/transactions', () => {
  let server: TestServer;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    const response = await fetch(`${server.baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${server.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: await response.json() };
  }
  const sql = async (text: string, params: unknown[] = []) => {
    const r = await call('POST', '/query', { sql: text, params });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data as Record<string, unknown>[];
  };
  const begin = async (body: Record<string, unknown> = {}): Promise<string> => {
    const r = await call('POST', '/transactions', body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.transaction_id as string;
  };
  const inTxn = (id: string, text: string, params: unknown[] = []) => call('POST', `/transactions/${id}/query`, { sql: text, params });
  const ok = async (id: string, text: string, params: unknown[] = []) => {
    const r = await inTxn(id, text, params);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const commit = (id: string) => call('POST', `/transactions/${id}/commit`);
  const rollback = (id: string) => call('POST', `/transactions/${id}/rollback`);

  beforeAll(async () => {
    server = await startTestServer();
    await sql('CREATE TABLE acct (id INT PRIMARY KEY, owner TEXT NOT NULL, balance INT NOT NULL)');
    await sql('CREATE TABLE oncall (doctor TEXT PRIMARY KEY, on_call BOOLEAN NOT NULL)');
    await sql('CREATE TABLE person (id INT PRIMARY KEY, email TEXT UNIQUE)');
    await sql('CREATE TABLE ticket (id BIGSERIAL PRIMARY KEY, note TEXT)');
  });
  afterAll(() => server?.close());

  const reset = async () => {
    await sql('DELETE FROM acct WHERE true');
    await sql("INSERT INTO acct VALUES (1, 'ann', 100), (2, 'bob', 50)");
  };
  const balance = async (id: number) => (await sql('SELECT balance FROM acct WHERE id = $1', [id]))[0]?.balance;

  it('begins with the spec fields and defaults, and shows the record', async () => {
    const r = await call('POST', '/transactions', {});
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ isolation_level: 'read_committed', read_only: false, status: 'open' });
    expect(Date.parse(r.body.expires_at) - Date.parse(r.body.started_at)).toBe(30_000);
    const shown = await call('GET', `/transactions/${r.body.transaction_id}`);
    expect(shown.body.status).toBe('open');
    // Clients that always send Content-Type: application/json with an empty body are served.
    const bare = await fetch(`${server.baseUrl}/api/v1/transactions/${r.body.transaction_id}/rollback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: '',
    });
    expect(bare.status).toBe(200);
    // No body at all begins with the defaults.
    const none = await fetch(`${server.baseUrl}/api/v1/transactions`, { method: 'POST', headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(none.status).toBe(201);
    const noneBody = (await none.json()) as { transaction_id: string; isolation_level: string };
    expect(noneBody.isolation_level).toBe('read_committed');
    await rollback(noneBody.transaction_id);
    expect(await bare.json()).toMatchObject({ success: true, status: 'rolled_back' });
  });

  it('commits several statements as one record, with rows for SELECT and RETURNING', async () => {
    await reset();
    const id = await begin();
    const moved = await ok(id, 'UPDATE acct SET balance = balance - 30 WHERE id = 1 RETURNING balance');
    expect(moved).toMatchObject({ success: true, transaction_id: id, affected_rows: 1, data: [{ balance: 70 }] });
    await ok(id, 'UPDATE acct SET balance = balance + 30 WHERE id = 2');
    await ok(id, "INSERT INTO acct VALUES (3, 'cy', 0)");
    // The transaction sees its own changes; nobody else does before commit (no dirty read).
    expect((await ok(id, 'SELECT id, balance FROM acct ORDER BY id')).data).toEqual([
      { id: 1, balance: 70 },
      { id: 2, balance: 80 },
      { id: 3, balance: 0 },
    ]);
    expect(await sql('SELECT id, balance FROM acct ORDER BY id')).toEqual([
      { id: 1, balance: 100 },
      { id: 2, balance: 50 },
    ]);
    const done = await commit(id);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ success: true, transaction_id: id, status: 'committed' });
    expect(typeof done.body.committed_at).toBe('string');
    expect(await sql('SELECT id, balance FROM acct ORDER BY id')).toEqual([
      { id: 1, balance: 70 },
      { id: 2, balance: 80 },
      { id: 3, balance: 0 },
    ]);
    // One log record per transaction: the next commit is the very next LSN.
    const next = await begin();
    await ok(next, "INSERT INTO acct VALUES (4, 'di', 1)");
    await ok(next, "INSERT INTO acct VALUES (5, 'ed', 1)");
    expect((await commit(next)).body.lsn).toBe(done.body.lsn + 1);
  });

  it('rolls back: nothing reaches the tables, and the id then reports it', async () => {
    await reset();
    const id = await begin();
    await ok(id, 'DELETE FROM acct WHERE id = 1');
    const r = await rollback(id);
    expect(r.body).toMatchObject({ success: true, transaction_id: id });
    expect(typeof r.body.rolled_back_at).toBe('string');
    expect(await balance(1)).toBe(100);
    const late = await inTxn(id, 'SELECT 1');
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('INVALID_STATE');
    expect((await commit(id)).status).toBe(409);
  });

  it('read_committed sees later commits (non-repeatable read); repeatable_read and serializable do not', async () => {
    await reset();
    const rc = await begin({ isolation_level: 'read_committed' });
    const rr = await begin({ isolation_level: 'repeatable_read' });
    const sr = await begin({ isolation_level: 'serializable' });
    for (const id of [rc, rr, sr]) expect((await ok(id, 'SELECT balance FROM acct WHERE id = 1')).data).toEqual([{ balance: 100 }]);
    await sql('UPDATE acct SET balance = 1 WHERE id = 1');
    expect((await ok(rc, 'SELECT balance FROM acct WHERE id = 1')).data).toEqual([{ balance: 1 }]);
    expect((await ok(rr, 'SELECT balance FROM acct WHERE id = 1')).data).toEqual([{ balance: 100 }]);
    expect((await ok(sr, 'SELECT balance FROM acct WHERE id = 1')).data).toEqual([{ balance: 100 }]);
    // Phantoms too: a row inserted after the snapshot stays out of repeatable_read's reads.
    await sql("INSERT INTO acct VALUES (9, 'new', 5)");
    expect((await ok(rr, 'SELECT count(*) AS n FROM acct')).data).toEqual([{ n: 2 }]);
    expect((await ok(rc, 'SELECT count(*) AS n FROM acct')).data).toEqual([{ n: 3 }]);
    for (const id of [rc, rr, sr]) expect((await commit(id)).status).toBe(200); // read-only: nothing to conflict
  });

  it.each(['repeatable_read', 'serializable'])('%s refuses a lost update (first committer wins)', async (level) => {
    await reset();
    const a = await begin({ isolation_level: level });
    const b = await begin({ isolation_level: level });
    const readA = (await ok(a, 'SELECT balance FROM acct WHERE id = 1')).data[0].balance as number;
    const readB = (await ok(b, 'SELECT balance FROM acct WHERE id = 1')).data[0].balance as number;
    await ok(a, 'UPDATE acct SET balance = $1 WHERE id = 1', [readA + 10]);
    expect((await commit(a)).status).toBe(200);
    // b computed its new balance from a value a has since replaced: refused at the statement or at commit.
    const write = await inTxn(b, 'UPDATE acct SET balance = $1 WHERE id = 1', [readB + 20]);
    const outcome = write.status === 200 ? await commit(b) : write;
    expect(outcome.status).toBe(409);
    expect(outcome.body.error.code).toBe('TRANSACTION_CONFLICT');
    expect(await balance(1)).toBe(110);
    if (write.status !== 200) expect((await rollback(b)).status).toBe(200);
  });

  it('read_committed: overlapping writes to one row, the second commit is refused (no locks, first committer wins)', async () => {
    await reset();
    const a = await begin();
    const b = await begin();
    await ok(a, 'UPDATE acct SET balance = balance + 10 WHERE id = 1');
    await ok(b, 'UPDATE acct SET balance = balance + 20 WHERE id = 1');
    expect((await commit(a)).status).toBe(200);
    const second = await commit(b);
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('TRANSACTION_CONFLICT');
    expect(await balance(1)).toBe(110);
    // A statement that starts after the other commit reads the committed row, as in PostgreSQL.
    const c = await begin();
    await ok(c, 'UPDATE acct SET balance = balance + 1 WHERE id = 1');
    expect((await commit(c)).status).toBe(200);
    expect(await balance(1)).toBe(111);
  });

  it('serializable refuses write skew; repeatable_read allows it, as in PostgreSQL', async () => {
    for (const level of ['repeatable_read', 'serializable']) {
      await sql('DELETE FROM oncall WHERE true');
      await sql("INSERT INTO oncall VALUES ('alice', true), ('bob', true)");
      const a = await begin({ isolation_level: level });
      const b = await begin({ isolation_level: level });
      expect((await ok(a, 'SELECT count(*) AS n FROM oncall WHERE on_call')).data).toEqual([{ n: 2 }]);
      expect((await ok(b, 'SELECT count(*) AS n FROM oncall WHERE on_call')).data).toEqual([{ n: 2 }]);
      await ok(a, "UPDATE oncall SET on_call = false WHERE doctor = 'alice'");
      const bWrite = await inTxn(b, "UPDATE oncall SET on_call = false WHERE doctor = 'bob'");
      expect(bWrite.status).toBe(200);
      expect((await commit(a)).status).toBe(200);
      const last = await commit(b);
      const onCall = (await sql('SELECT count(*) AS n FROM oncall WHERE on_call'))[0]!.n;
      if (level === 'serializable') {
        expect(last.status).toBe(409);
        expect(last.body.error.code).toBe('TRANSACTION_CONFLICT');
        expect(onCall).toBe(1);
      } else {
        expect(last.status).toBe(200);
        expect(onCall).toBe(0);
      }
    }
  });

  it('serializable answers the conflict at the statement when it is already known', async () => {
    await reset();
    const a = await begin({ isolation_level: 'serializable' });
    await ok(a, 'SELECT balance FROM acct WHERE id = 2');
    await sql('UPDATE acct SET balance = 0 WHERE id = 2');
    const r = await inTxn(a, 'UPDATE acct SET balance = 7 WHERE id = 1');
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('TRANSACTION_CONFLICT');
    // The transaction is now aborted: statements are refused, commit rolls it back.
    expect((await inTxn(a, 'SELECT 1')).body.error.code).toBe('INVALID_STATE');
    const c = await commit(a);
    expect(c.status).toBe(409);
    expect(c.body.error.message).toMatch(/rolled back/);
    expect(await balance(1)).toBe(100);
  });

  it('concurrent inserts of the same unique value: the second commit is refused', async () => {
    await sql('DELETE FROM person WHERE true');
    const a = await begin();
    const b = await begin();
    await ok(a, "INSERT INTO person VALUES (1, 'x@example.com')");
    await ok(b, "INSERT INTO person VALUES (2, 'x@example.com')");
    expect((await commit(a)).status).toBe(200);
    const second = await commit(b);
    expect(second.status).toBe(409);
    expect(await sql('SELECT id FROM person')).toEqual([{ id: 1 }]);
  });

  it('BIGSERIAL values are never handed out twice to concurrent transactions', async () => {
    const a = await begin();
    const b = await begin();
    const idA = (await ok(a, "INSERT INTO ticket (note) VALUES ('a') RETURNING id")).data[0].id;
    const idB = (await ok(b, "INSERT INTO ticket (note) VALUES ('b') RETURNING id")).data[0].id;
    expect(idA).not.toBe(idB);
    expect((await commit(b)).status).toBe(200);
    expect((await commit(a)).status).toBe(200);
    const idC = (await sql("INSERT INTO ticket (note) VALUES ('c') RETURNING id"))[0]!.id;
    expect(Number(idC)).toBeGreaterThan(Math.max(Number(idA), Number(idB)));
  });

  it('a read_only transaction refuses writes', async () => {
    const id = await begin({ read_only: true, isolation_level: 'repeatable_read' });
    expect((await ok(id, 'SELECT count(*) AS n FROM acct')).data).toHaveLength(1);
    const w = await inTxn(id, "INSERT INTO acct VALUES (77, 'x', 1)");
    expect(w.status).toBe(409);
    expect(w.body.error.code).toBe('INVALID_STATE');
    expect(w.body.error.message).toMatch(/read-only transaction/);
    await rollback(id);
  });

  it('expires at expires_at: rolled back, and later calls say so', async () => {
    await reset();
    const id = await begin({ timeout_ms: 300 });
    await ok(id, 'UPDATE acct SET balance = 0 WHERE id = 1');
    await new Promise((resolve) => setTimeout(resolve, 450));
    const late = await inTxn(id, 'SELECT 1');
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('INVALID_STATE');
    expect(late.body.error.message).toMatch(/expired/);
    expect((await commit(id)).body.error.message).toMatch(/expired/);
    expect((await call('GET', `/transactions/${id}`)).body.status).toBe('expired');
    expect(await balance(1)).toBe(100);
  });

  it('expiring while a long statement runs cancels it; the transaction ends expired and the server keeps serving', async () => {
    const id = await begin({ timeout_ms: 300 });
    await ok(id, 'UPDATE acct SET balance = 5 WHERE id = 2');
    const long = await inTxn(id, 'SELECT count(*) FROM generate_series(1, 200000000)');
    expect([409, 504]).toContain(long.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await call('GET', `/transactions/${id}`)).body.status).toBe('expired');
    expect(await balance(2)).not.toBe(5);
  });

  it('refuses DDL and transaction control inside, bad bodies, unknown ids', async () => {
    const id = await begin();
    const ddl = await inTxn(id, 'CREATE TABLE nope (a INT)');
    expect(ddl.status).toBe(400);
    expect(ddl.body.error.message).toMatch(/DDL/);
    await rollback(id);
    const id2 = await begin();
    expect((await inTxn(id2, 'COMMIT')).status).toBe(400);
    await rollback(id2);
    expect((await call('POST', '/transactions', { isolation_level: 'snapshot' })).status).toBe(422);
    expect((await call('POST', '/transactions', { timeout_ms: 10_000_000 })).body.error.code).toBe('VALIDATION_ERROR');
    expect((await call('POST', '/transactions', { read_only: 'yes' })).status).toBe(422);
    const missing = await call('POST', '/transactions/00000000-0000-0000-0000-000000000000/query', { sql: 'SELECT 1' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('NOT_FOUND');
    expect((await call('POST', '/transactions/nope/commit')).status).toBe(404);
  });

  it('a failed statement aborts the transaction (PostgreSQL rule); rollback ends it cleanly', async () => {
    await reset();
    const id = await begin();
    await ok(id, 'UPDATE acct SET balance = 1 WHERE id = 1');
    const dup = await inTxn(id, "INSERT INTO acct VALUES (2, 'dup', 0)");
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONSTRAINT_VIOLATION');
    expect((await call('GET', `/transactions/${id}`)).body.status).toBe('aborted');
    expect((await rollback(id)).status).toBe(200);
    expect(await balance(1)).toBe(100);
  });

  it.each(['repeatable_read', 'serializable'])('%s: concurrent read-modify-write transfers keep the total (retrying conflicts)', async (level) => {
    await sql('DELETE FROM acct WHERE true');
    const accounts = 5;
    await sql(`INSERT INTO acct SELECT g, 'o' || g, 1000 FROM generate_series(1, ${accounts}) g`);
    let conflicts = 0;
    const workerCount = 6;
    // The first transfer of every worker reads before any of them writes (a barrier), so the
    // workers' snapshots overlap and conflicts happen however the machine schedules them.
    let readersLeft = workerCount;
    let allRead: () => void = () => {};
    const barrier = new Promise<void>((resolve) => {
      allRead = resolve;
    });
    const transfer = async (from: number, to: number, amount: number, first: boolean): Promise<void> => {
      for (let attempt = 0; ; attempt++) {
        const id = await begin({ isolation_level: level });
        const read = await inTxn(id, 'SELECT id, balance FROM acct WHERE id = $1 OR id = $2', [from, to]);
        if (first && attempt === 0) {
          if (--readersLeft === 0) allRead();
          await barrier;
        }
        const rows = read.body.data as { id: number; balance: number }[];
        const balanceOf = (n: number) => rows.find((r) => r.id === n)!.balance;
        // The new balances are computed by the client from what it read: a lost update would show.
        const steps = [
          await inTxn(id, 'UPDATE acct SET balance = $1 WHERE id = $2', [balanceOf(from) - amount, from]),
          await inTxn(id, 'UPDATE acct SET balance = $1 WHERE id = $2', [balanceOf(to) + amount, to]),
        ];
        const failed = steps.find((s) => s.status !== 200);
        const end = failed ?? (await commit(id));
        if (end.status === 200) return;
        expect(end.body.error.code).toMatch(/TRANSACTION_CONFLICT|INVALID_STATE/);
        conflicts += 1;
        if (failed) await rollback(id);
      }
    };
    const workers = Array.from({ length: workerCount }, (_, w) =>
      (async () => {
        for (let i = 0; i < 8; i++) await transfer(1 + ((w + i) % accounts), 1 + ((w + i + 1) % accounts), 1 + w, i === 0);
      })(),
    );
    await Promise.all(workers);
    const total = await sql('SELECT sum(balance) AS total FROM acct');
    expect(Number(total[0]!.total)).toBe(accounts * 1000);
    expect(conflicts).toBeGreaterThan(0); // the first round raced by construction
  });

  describe('several statements in one POST /query run as one transaction, as in PostgreSQL', () => {
    const lsnOfEmptyCommit = async (): Promise<number> => {
      const id = await begin();
      await ok(id, "INSERT INTO person VALUES (1000, 'lsn-probe') ON CONFLICT (id) DO UPDATE SET email = 'lsn-probe'");
      return (await commit(id)).body.lsn as number;
    };

    it('commits them as one record, with or without BEGIN ... COMMIT', async () => {
      await reset();
      const before = await lsnOfEmptyCommit();
      await sql('BEGIN; UPDATE acct SET balance = balance - 5 WHERE id = 1; UPDATE acct SET balance = balance + 5 WHERE id = 2; COMMIT');
      await sql('UPDATE acct SET balance = balance - 1 WHERE id = 1; UPDATE acct SET balance = balance + 1 WHERE id = 2');
      expect(await lsnOfEmptyCommit()).toBe(before + 3);
      expect(await balance(1)).toBe(94);
      expect(await balance(2)).toBe(56);
    });

    it('a failing statement leaves nothing of the others', async () => {
      await reset();
      const failed = await call('POST', '/query', { sql: "UPDATE acct SET balance = 0 WHERE id = 1; INSERT INTO acct VALUES (2, 'dup', 0)" });
      expect(failed.status).toBe(409);
      expect(await balance(1)).toBe(100);
      const explicit = await call('POST', '/query', { sql: "BEGIN; DELETE FROM acct WHERE id = 2; INSERT INTO acct VALUES (1, 'dup', 0); COMMIT" });
      expect(explicit.status).toBe(409);
      expect(await balance(2)).toBe(50);
    });

    it('ROLLBACK at the end discards them, and the last result still comes back', async () => {
      await reset();
      const r = await call('POST', '/query', { sql: 'BEGIN; UPDATE acct SET balance = 1 WHERE id = 1 RETURNING balance; ROLLBACK' });
      expect(r.status).toBe(200);
      expect(await balance(1)).toBe(100);
    });

    it('refuses BEGIN without COMMIT, and control statements in the middle', async () => {
      for (const text of [
        'BEGIN; UPDATE acct SET balance = 1 WHERE id = 1',
        'UPDATE acct SET balance = 1 WHERE id = 1; COMMIT',
        'UPDATE acct SET balance = 1 WHERE id = 1; COMMIT; UPDATE acct SET balance = 2 WHERE id = 1',
      ]) {
        const r = await call('POST', '/query', { sql: text });
        expect(r.status, text).toBe(400);
        expect(r.body.error.details.reason).toBe('transaction_control');
      }
    });
  });

  it('roles and tenants: a read_only key reads in a transaction and is refused writes; another tenant cannot see it', async () => {
    const reader = await newKey(server.dataDir, { role: 'read_only' });
    const other = await newKey(server.dataDir, { role: 'read_write', tenant: 'other' });
    let begun = await api(server.baseUrl, '/transactions', { headers: bearer(reader.key), body: {} });
    for (let i = 0; begun.status === 401 && i < 50; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100)); // the key file is re-read about once a second
      begun = await api(server.baseUrl, '/transactions', { headers: bearer(reader.key), body: {} });
    }
    expect(begun.status).toBe(201);
    const id = begun.body.transaction_id as string;
    const read = await api(server.baseUrl, `/transactions/${id}/query`, { headers: bearer(reader.key), body: { sql: 'SELECT count(*) AS n FROM acct' } });
    expect(read.status).toBe(200);
    const write = await api(server.baseUrl, `/transactions/${id}/query`, { headers: bearer(reader.key), body: { sql: 'DELETE FROM acct WHERE true' } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe('AUTHORIZATION_DENIED');
    const foreign = await api(server.baseUrl, `/transactions/${id}`, { headers: bearer(other.key) });
    expect(foreign.status).toBe(404);
    expect((await api(server.baseUrl, `/transactions/${id}/rollback`, { headers: bearer(reader.key), body: {} })).status).toBe(200);
  });

  it('review fixes: ROLLBACK with DDL is refused, batch transactions leave no record, serializable point reads stay precise', async () => {
    await reset();
    const refused = await call('POST', '/query', { sql: 'BEGIN; UPDATE acct SET balance = -1 WHERE id = 1; CREATE TABLE zz (x INT); ROLLBACK' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.reason).toBe('transaction_control');
    expect(await balance(1)).toBe(100);
    // A point read in a serializable transaction conflicts only with writes to that row.
    const a = await begin({ isolation_level: 'serializable' });
    await ok(a, 'SELECT balance FROM acct WHERE id = 1');
    await sql('UPDATE acct SET balance = 7 WHERE id = 2');
    await ok(a, 'UPDATE acct SET balance = 99 WHERE id = 1');
    expect((await commit(a)).status).toBe(200);
    expect(await balance(1)).toBe(99);
  });

  it('a large transaction commits promptly after many unrelated writes (incremental conflict checks)', async () => {
    await sql('CREATE TABLE bulk_t (id INT PRIMARY KEY)');
    const id = await begin();
    await ok(id, 'INSERT INTO bulk_t SELECT g FROM generate_series(1, 50000) g');
    for (let i = 0; i < 200; i++) await sql('INSERT INTO person VALUES ($1, $2)', [10_000 + i, `p${i}@x`]);
    // While it commits, the server keeps answering (the check once blocked the event loop for tens of seconds).
    const committing = commit(id);
    expect((await fetch(`${server.baseUrl}/api/v1/live`)).status).toBe(200);
    expect((await committing).status).toBe(200);
    expect((await sql('SELECT count(*) AS n FROM bulk_t'))[0]!.n).toBe(50000);
  });

  it.each(['read_committed', 'repeatable_read', 'serializable'])(
    '%s: a multi-row insert of new keys reads only those keys (another commit to the same table is no conflict)',
    async (level) => {
      const table = `bulk_keys_${level}`;
      await sql(`CREATE TABLE ${table} (id BIGINT PRIMARY KEY, v TEXT)`);
      await sql(`INSERT INTO ${table} VALUES (1, 'stored')`);
      const t = await begin({ isolation_level: level });
      await ok(t, `INSERT INTO ${table} VALUES ${Array.from({ length: 300 }, (_, i) => `(${1000 + i}, 'mine')`).join(', ')}`);
      await sql(`INSERT INTO ${table} VALUES (5, 'other')`);
      expect((await commit(t)).status).toBe(200);
      expect((await sql(`SELECT count(*) AS n FROM ${table}`))[0]!.n).toBe(302);
    },
  );
});
