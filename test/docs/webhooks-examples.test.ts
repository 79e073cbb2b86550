import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryHeaders } from '../../sinks/webhooks/signature.js';
import { runBash, shellBlocks } from '../helpers/doc-examples.js';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

/**
 * docs/webhooks.md must be true: its curl examples run against a real server (as
 * api-examples.test.ts runs docs/api.md's), and its Node and Python signature checks accept what
 * svcdb sends and refuse a changed body, another secret and a stale timestamp.
 */
const DOC = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');

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

function block(language: string): string {
  const found = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(DOC);
  expect(found, `a \`\`\`${language} block in docs/webhooks.md`).not.toBeNull();
  return found![1]!;
}

const SECRET = 'whsec_c3ZjZGItZXhhbXBsZS1zaWduaW5nLWtleQ==';
const BODY = Buffer.from('{"event_id":"01KB0ZQ9W1C6M3V5J7D2A8X4RT","operation":"INSERT","value":{"id":1,"note":"héllo"}}');

/** What svcdb sends, header names in lower case (as Node's and most frameworks' request objects have them). */
function sent(sentAtMs: number): Record<string, string> {
  const headers = deliveryHeaders({ secret: SECRET, body: BODY, eventId: '01KB0ZQ9W1C6M3V5J7D2A8X4RT', contentType: 'application/json', sentAtMs });
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** [secret, body, headers, expected] cases for the snippets. */
function cases(): [string, string, Record<string, string>, boolean][] {
  const now = sent(Date.now());
  const body = BODY.toString('base64');
  const changed = Buffer.from(BODY.toString('utf8').replace('héllo', 'hello')).toString('base64');
  return [
    [SECRET, body, now, true],
    [SECRET, changed, now, false],
    ['another-secret', body, now, false],
    [SECRET, body, sent(Date.now() - 10 * 60_000), false],
    [SECRET, body, { ...now, 'x-svc-signature': '' }, false],
  ];
}

describe('docs/webhooks.md', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('every curl example reaches a route and answers as its comment says', async () => {
    const blocks = shellBlocks(DOC);
    expect(blocks.length).toBeGreaterThan(0);
    const host = server.baseUrl.replace(/^http:\/\//, '');
    let calls = 0;
    for (const text of blocks) {
      const run = await runBash(PRELUDE + text.replaceAll('localhost:8080', host), { KEY: server.apiKey });
      const statuses = [...run.stderr.matchAll(/@@CALL (\d+)/g)].map((m) => Number(m[1]));
      const lines = text.split('\n').filter((l) => /\bcurl /.test(l));
      expect(run.status, `${text}\n${run.stderr}`).toBe(0);
      expect(statuses.length).toBe(lines.length);
      statuses.forEach((status, i) => {
        const expected = /# (\d{3})/.exec(lines[i]!)?.[1];
        if (expected) expect(status, lines[i]).toBe(Number(expected));
        else expect(status, `${lines[i]}\n${run.stdout}`).toBeLessThan(400);
      });
      expect(run.stdout).not.toContain('whsec_');
      expect(run.stdout).not.toContain('a-long-random-string');
      calls += statuses.length;
    }
    expect(calls).toBeGreaterThan(8);
  }, 60_000);

  it('the Node check accepts what svcdb sends and refuses a changed body, another secret, a stale timestamp', () => {
    const code = `${block('js')}
const cases = JSON.parse(process.env.CASES);
console.log(JSON.stringify(cases.map(([secret, body, headers]) => verifySvcSignature(secret, Buffer.from(body, 'base64'), headers))));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { env: { ...process.env, CASES: JSON.stringify(cases()) } });
    expect(JSON.parse(out.toString())).toEqual(cases().map((c) => c[3]));
  });

  const python = spawnSync('python3', ['--version']).status === 0;
  it.skipIf(!python)('the Python check does the same', () => {
    const code = `${block('python')}
import base64, json, os
cases = json.loads(os.environ["CASES"])
print(json.dumps([verify_svc_signature(s, base64.b64decode(b), h) for s, b, h, _ in cases]))`;
    const out = execFileSync('python3', ['-c', code], { env: { ...process.env, CASES: JSON.stringify(cases()) } });
    expect(JSON.parse(out.toString())).toEqual(cases().map((c) => c[3]));
  });
});
