import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, stopEvenIfStuck, type Serving } from '../helpers/cli.js';
import { tempDir } from '../helpers/stack.js';

const KEY = 'regex-deadline-key';

/** Thirty a's and a '!': what the patterns below backtrack on for seconds to hours. */
const TEXT = `repeat('a', 30) || '!'`;

/**
 * A regex V8's linear engine cannot run (a lookaround, a back reference, a bound above 16) still
 * backtracks, and nothing on the event loop can interrupt a running RegExp: before the change
 * `SELECT repeat('a', 30) || '!' ~ '(?=a)(a+)+$'` held a real `svcdb serve` for seconds (hours
 * with a few more a's) whatever its timeout_ms, every other request waiting. Now such a match runs
 * under a watchdog (query/functions/regex-guard.ts) that stops it at the statement's deadline:
 * the statement fails with QUERY_TIMEOUT (504), as one past its timeout_ms does, soon after that
 * deadline, and a request sent meanwhile is answered right after. The server is started with
 * --query-timeout-ms-max 1000, so a statement without timeout_ms gets the route's default capped
 * to 1 s: the default deadline is shown without waiting 30 s.
 */
describe('a regex that backtracks stops at its statement deadline', () => {
  let server: Serving;
  let remove: () => Promise<void>;
  const base = (): string => server.listening.httpUrl.replace(/\/$/, '');

  const query = async (sql: string, timeoutMs?: number): Promise<{ status: number; ms: number; body: { data?: unknown; error?: { code: string } } }> => {
    const started = performance.now();
    const response = await fetch(`${base()}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify(timeoutMs === undefined ? { sql } : { sql, timeout_ms: timeoutMs }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = (await response.json()) as { data?: unknown; error?: { code: string } };
    return { status: response.status, ms: performance.now() - started, body };
  };

  /** `sql` with timeout_ms 300 fails with QUERY_TIMEOUT within a second, and GET /api/v1/live sent 50 ms in is answered within ~the same. */
  const timesOut = async (sql: string): Promise<void> => {
    const slow = query(sql, 300);
    await new Promise((done) => setTimeout(done, 50));
    const started = performance.now();
    const live = await fetch(`${base()}/api/v1/live`, { signal: AbortSignal.timeout(20_000) });
    const liveMs = performance.now() - started;
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ alive: true });
    const answer = await slow;
    expect({ sql, status: answer.status, code: answer.body.error?.code }).toEqual({ sql, status: 504, code: 'QUERY_TIMEOUT' });
    // 300 ms of deadline (the binder's attempt to fold constants, regex-guard.ts NO_DEADLINE_MS,
    // falls within it), and slack for a loaded machine.
    expect(answer.ms).toBeLessThan(1000);
    expect(answer.ms).toBeGreaterThan(290);
    expect(liveMs).toBeLessThan(1000);
  };

  beforeAll(async () => {
    const dir = await tempDir('svcdb-regex-deadline-');
    remove = dir.remove;
    server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--data', dir.dir, '--api-key', KEY, '--query-timeout-ms-max', '1000']);
    const made = await query(`CREATE TABLE words (id INTEGER PRIMARY KEY, w TEXT)`);
    expect(made.status).toBe(200);
    const filled = await query(`INSERT INTO words VALUES (1, repeat('a', 30) || '!'), (2, 'abc')`);
    expect(filled.status).toBe(200);
  }, 60_000);
  afterAll(async () => {
    // A server stuck in a match never gets to its SIGTERM handler: do not leave it spinning.
    await stopEvenIfStuck(server);
    await remove();
  }, 20_000);

  it('a lookahead, a back reference and a large bound: constants, and a column per row', async () => {
    await timesOut(`SELECT ${TEXT} ~ '(?=a)(a+)+$' AS r`);
    await timesOut(`SELECT ${TEXT} ~ '(a*)*\\1$' AS r`);
    await timesOut(`SELECT ${TEXT} ~ '(a{1,20})+$' AS r`);
    await timesOut(`SELECT id FROM words WHERE w ~ '(?<=a)(a+)+$'`);
    await timesOut(`SELECT id FROM words WHERE w ~* '\\m(a+)+$'`);
  }, 30_000);

  it('every regex entry point', async () => {
    await timesOut(`SELECT id FROM words WHERE w !~ '(?=a)(a+)+$'`);
    await timesOut(`SELECT id FROM words WHERE w ~ ANY(ARRAY['x', '(?=a)(a+)+$'])`);
    await timesOut(`SELECT id FROM words WHERE w SIMILAR TO '(a{1,20})+'`);
    await timesOut(`SELECT regexp_like(w, '(?=a)(a+)+$') AS r FROM words`);
    await timesOut(`SELECT regexp_match(w, '(?=a)(a+)+$') AS r FROM words`);
    await timesOut(`SELECT substring(w from '(?=a)(a+)+$') AS r FROM words`);
    await timesOut(`SELECT regexp_replace(w, '(?=a)(a+)+$', 'x', 'g') AS r FROM words`);
    await timesOut(`SELECT regexp_count(w, '(?=a)(a+)+$') AS r FROM words`);
    await timesOut(`SELECT regexp_substr(w, '(?=a)(a+)+$') AS r FROM words`);
    await timesOut(`SELECT regexp_instr(w, '(a+)+$', 1, 1, 0, '', 1) AS r FROM words`);
    await timesOut(`SELECT regexp_split_to_array(w, '(?=a)(a+)+$') AS r FROM words`);
    await timesOut(`SELECT count(*) AS r FROM words, regexp_matches(w, '(?=a)(a+)+$', 'g')`);
    await timesOut(`SELECT count(*) AS r FROM words, regexp_split_to_table(w, '(?=a)(a+)+$')`);
  }, 60_000);

  it('without timeout_ms the route default applies (here capped to 1 s by --query-timeout-ms-max)', async () => {
    const answer = await query(`SELECT id FROM words WHERE w ~ '(?=a)(a+)+$'`);
    expect(answer.status).toBe(504);
    expect(answer.body.error?.code).toBe('QUERY_TIMEOUT');
    expect(answer.ms).toBeGreaterThan(950);
    expect(answer.ms).toBeLessThan(2500);
  }, 30_000);

  it('an ordinary pattern of the same kinds answers as before', async () => {
    const answer = await query(`SELECT w ~ '(?=a)(a+)!$' AS r, regexp_replace(w, '(a)\\1', 'x', 'g') AS s FROM words ORDER BY id`, 300);
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual([
      { r: true, s: `${'x'.repeat(15)}!` },
      { r: false, s: 'abc' },
    ]);
  });
});
