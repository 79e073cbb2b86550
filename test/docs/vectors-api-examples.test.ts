import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBash, shellBlocks } from '../helpers/doc-examples.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * The curl examples of docs/vectors-api.md must work against a real server, as those of docs/api.md
 * do (test/docs/api-examples.test.ts): each ```sh block runs in order under bash, with localhost:8080
 * replaced by the test server and KEY set to its admin key; every call answers 2xx with JSON.
 */
const DOC = new URL('../../docs/vectors-api.md', import.meta.url);

/** curl prints its body on one line, then `@@STATUS <code>` on the next. */
const PRELUDE = `
set -u
curl() { command curl -s -w '\\n@@STATUS %{http_code}\\n' "$@"; }
`;

describe('docs/vectors-api.md examples', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('every curl example answers 2xx with a JSON body', async () => {
    const blocks = shellBlocks(readFileSync(DOC, 'utf8'));
    expect(blocks.length).toBe(2);
    const host = server.baseUrl.replace(/^http:\/\//, '');
    let calls = 0;
    for (const block of blocks) {
      const run = await runBash(PRELUDE + block.replaceAll('localhost:8080', host), { KEY: server.apiKey });
      expect(run.status, run.stderr).toBe(0);
      const answers = [...run.stdout.matchAll(/(.*)\n@@STATUS (\d{3})/g)];
      for (const [, body, status] of answers) {
        expect(Number(status), `${body}`).toBeLessThan(300);
        expect(() => JSON.parse(body!), body).not.toThrow();
      }
      calls += answers.length;
    }
    expect(calls).toBe(15);
  }, 120_000);
});
