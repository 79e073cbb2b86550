import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, stopEvenIfStuck, type Serving } from '../helpers/cli.js';
import { tempDir } from '../helpers/stack.js';

const KEY = 'regex-backtracking-key';

/**
 * A pattern that makes a backtracking engine exponential ('(a+)+$' against 'aaaa…!') or
 * polynomial (LIKE '%a%a%a%a%a%b', one '.*' per '%') must not hold the event loop: svcdb runs
 * JavaScript's RegExp on the request's thread, and no statement timeout can interrupt a running
 * match, so every other request would wait. query/functions/pattern.ts moves such regexes to V8's
 * linear-time engine and matches LIKE piece by piece. A real `svcdb serve` (its own process, the
 * flag set at its start) answers each such statement, right, within seconds, and a simple request
 * sent meanwhile is answered meanwhile. Before the change each of these ran for hours.
 */
describe('regexes and LIKE cannot stall the server', () => {
  let server: Serving;
  let remove: () => Promise<void>;

  const query = async (sql: string, params?: unknown[]): Promise<{ status: number; ms: number; data: Record<string, unknown>[] }> => {
    const started = performance.now();
    const response = await fetch(`${server.listening.httpUrl.replace(/\/$/, '')}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ sql, params }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = (await response.json()) as { data?: Record<string, unknown>[] };
    return { status: response.status, ms: performance.now() - started, data: body.data ?? [] };
  };

  /** `sql` answered with `expected` within 5 s, and `SELECT 1` sent 50 ms later answered within 2 s. */
  const answersWhileOthersAreServed = async (sql: string, expected: unknown, params?: unknown[]): Promise<void> => {
    const slow = query(sql, params);
    await new Promise((done) => setTimeout(done, 50));
    const simple = await query('SELECT 1 AS one');
    expect(simple.status).toBe(200);
    expect(simple.data).toEqual([{ one: 1 }]);
    expect(simple.ms).toBeLessThan(2000);
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(5000);
    expect(answer.data).toEqual([{ r: expected }]);
  };

  beforeAll(async () => {
    const dir = await tempDir('svcdb-regex-backtracking-');
    remove = dir.remove;
    server = await serve(['--host', '127.0.0.1', '--port', '0', '--ops-port', '0', '--data', dir.dir, '--api-key', KEY]);
  }, 60_000);
  afterAll(async () => {
    // A server stuck in a match never gets to its SIGTERM handler: do not leave it spinning.
    await stopEvenIfStuck(server);
    await remove();
  }, 20_000);

  it("'(a+)+$' against forty a's and a '!': false (~ and regexp_like)", async () => {
    await answersWhileOthersAreServed(`SELECT repeat('a', 40) || '!' ~ '(a+)+$' AS r`, false);
    await answersWhileOthersAreServed(`SELECT regexp_like(repeat('a', 40) || '!', '(a|aa)+$') AS r`, false);
  }, 30_000);

  it('the functions that walk the matches (regexp_replace, regexp_count, regexp_matches) as well', async () => {
    await answersWhileOthersAreServed(`SELECT regexp_replace(repeat('a', 40) || '!', '(a+)+b', 'x', 'g') AS r`, `${'a'.repeat(40)}!`);
    await answersWhileOthersAreServed(`SELECT regexp_count(repeat('a', 40) || '!', '(a*)*b') AS r`, 0);
    await answersWhileOthersAreServed(`SELECT count(*) AS r FROM regexp_matches(repeat('a', 40) || '!', '(a+)+b', 'g')`, 0);
  }, 30_000);

  it('named classes, case-insensitive matching and text beyond Latin-1 (a larger linear form)', async () => {
    await answersWhileOthersAreServed(`SELECT repeat('a', 40) || '!' ~ '([[:alpha:]]+)+$' AS r`, false);
    await answersWhileOthersAreServed(`SELECT repeat('A', 40) || '!' ~* '(a+)+$' AS r`, false);
    await answersWhileOthersAreServed(`SELECT repeat('α', 40) || '!' ~ '([[:alpha:]]+)+$' AS r`, false);
    await answersWhileOthersAreServed(`SELECT repeat('😀', 40) || '!' ~ '(.+)+x' AS r`, false);
  }, 30_000);

  it('the linear form finds what the v form finds: a match, its groups, replacements beyond the BMP', async () => {
    await answersWhileOthersAreServed(`SELECT repeat('a', 40) ~ '(a+)+$' AS r`, true);
    await answersWhileOthersAreServed(`SELECT regexp_match('x😀😁y', '(.)(.)y') AS r`, ['😀', '😁']);
    await answersWhileOthersAreServed(`SELECT regexp_replace('a😀b', '[^a-z]', '-', 'g') AS r`, 'a-b');
    await answersWhileOthersAreServed(`SELECT regexp_count('Éé😀', '[[:lower:]]', 1, 'i') AS r`, 2);
    // A lone surrogate (from a parameter: SQL text cannot hold one) is a character to the v form and
    // none to the UTF-16 form: such text keeps the v form.
    await answersWhileOthersAreServed(`SELECT regexp_replace($1, '.', '-', 'g') AS r`, '---', ['a\ud83db']);
    await answersWhileOthersAreServed(`SELECT regexp_count($1 || '😀', '[^a]') AS r`, 3, ['a\ud83db']);
    await answersWhileOthersAreServed(`SELECT $1 ~ '^a.b$' AS r`, true, ['a\ud83db']);
  }, 30_000);

  it("LIKE, ILIKE and SIMILAR TO '%a%a%a%a%a%b' against 3,000 a's: false, where one '.*' per '%' backtracks for hours", async () => {
    await answersWhileOthersAreServed(`SELECT repeat('a', 3000) LIKE '%a%a%a%a%a%b' AS r`, false);
    await answersWhileOthersAreServed(`SELECT repeat('a', 3000) ILIKE '%A%a%A%a%a%B' AS r`, false);
    await answersWhileOthersAreServed(`SELECT repeat('a', 3000) || 'b' LIKE '%a%a%a%a%a%b' AS r`, true);
    await answersWhileOthersAreServed(`SELECT repeat('ab', 1000) LIKE 'ab%_b%a_%ab' AS r`, true);
    // SIMILAR TO is a regex (one '.*' per '%'): V8's linear engine takes it.
    await answersWhileOthersAreServed(`SELECT repeat('a', 3000) SIMILAR TO '%a%a%a%a%a%b' AS r`, false);
  }, 30_000);
});
