import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBash, shellBlocks } from '../helpers/doc-examples.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * The curl examples of docs/api.md must work against a real server: each ```sh block runs in
 * order under bash (localhost:8080 replaced by the test server, KEY set to its admin key). Every
 * curl must reach a route (no "no route" 404), answer no 5xx and no 401, and parse as JSON or NDJSON.
 * Examples that are meant to fail say so with a `# 4xx` comment naming the status.
 */
const DOC = new URL('../../docs/api.md', import.meta.url);

/** Wraps curl so each call prints its body, then a marker line with the status and the expected-failure note. */
const PRELUDE = `
set -u
curl() {
  local out status
  out=$(command curl -s -w '\\n@@STATUS %{http_code}' "$@")
  status=\${out##*@@STATUS }
  printf '%s\\n' "\${out%$'\\n'@@STATUS *}"
  echo "@@CALL $status" >&2
}
`;

describe('docs/api.md examples', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('every curl example reaches a route and answers without a server error', async () => {
    const blocks = shellBlocks(readFileSync(DOC, 'utf8'));
    expect(blocks.length).toBeGreaterThan(0);
    const host = server.baseUrl.replace(/^http:\/\//, '');
    let calls = 0;
    for (const block of blocks) {
      const script = PRELUDE + block.replaceAll('localhost:8080', host);
      const run = await runBash(script, { KEY: server.apiKey });
      const statuses = [...run.stderr.matchAll(/@@CALL (\d+)/g)].map((m) => Number(m[1]));
      const lines = block.split('\n').filter((l) => /^\S*\s*(\w+=\$\()?curl /.test(l.trim()) || /\bcurl /.test(l));
      expect(run.status, `${block}\n${run.stderr}`).toBe(0);
      statuses.forEach((status, i) => {
        const line = lines[i] ?? '';
        const expected = /# (\d{3})/.exec(line)?.[1];
        if (expected) expect(status, line).toBe(Number(expected));
        else expect(status, `${line}\n${run.stdout}`).toBeLessThan(400);
      });
      expect(run.stdout).not.toMatch(/no route for/);
      calls += statuses.length;
    }
    expect(calls).toBeGreaterThan(5);
  }, 120_000);
});
