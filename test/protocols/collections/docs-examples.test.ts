import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBash, shellBlocks } from '../../helpers/doc-examples.js';
import { startTestServer, type TestServer } from '../../helpers/sql-server.js';

/**
 * docs/collections.md's curl examples run against a real server (localhost:8080 replaced by the
 * test server, KEY its admin key), and each call answers the status the walk-through implies.
 */
const DOC = new URL('../../../docs/collections.md', import.meta.url);

/** Wraps curl so each call prints its body, and its status on stderr. */
const PRELUDE = `
set -eu -o pipefail
curl() {
  local out status
  out=$(command curl -s -w '\\n@@STATUS %{http_code}' "$@")
  status=\${out##*@@STATUS }
  printf '%s\\n' "\${out%$'\\n'@@STATUS *}"
  echo "@@CALL $status" >&2
}
`;

describe('docs/collections.md examples', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('the walk-through runs: create, list, read, merge, replace, SQL, delete, 404, openapi', async () => {
    const blocks = shellBlocks(readFileSync(DOC, 'utf8'));
    expect(blocks).toHaveLength(1);
    const host = server.baseUrl.replace(/^http:\/\//, '');
    const run = await runBash(`${PRELUDE}${blocks[0]!.replaceAll('localhost:8080', host)}`, { KEY: server.apiKey });
    expect(run.status, run.stderr).toBe(0);
    const statuses = [...run.stderr.matchAll(/@@CALL (\d+)/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([201, 200, 200, 200, 200, 200, 204, 404, 200]);
    expect(run.stdout).toContain('"name":"Dune Messiah"');
    expect(run.stdout).toContain('"openapi":"3.0.0"');
  });
});
