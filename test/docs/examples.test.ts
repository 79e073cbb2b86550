import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/cli.js';
import { runBash } from '../helpers/doc-examples.js';
import { startTestServer, TEST_API_KEY, type TestServer } from '../helpers/sql-server.js';

/**
 * The README's and docs' curl examples run against a real server, so the docs claim only what
 * works. Every ```sh or ```bash block that calls curl runs, in order, one bash process per file,
 * against a fresh server; `localhost:8080` becomes the server's address, `$KEY` and `$SVC_API_KEY`
 * its admin key and `$SVC_DATA_DIR` its data directory (so `svcdb keys create` works beside it);
 * lines that start a server (`npm start`) or set those variables to a placeholder are left out.
 * A curl answered 4xx/5xx fails the test unless the example says it expects that status (a trailing
 * `# 404` on a one-line curl, or a line `# expect: 404` before a longer one).
 * A block that cannot run here (an external identity provider, a Kafka broker, Docker) is preceded
 * by `<!-- example: not run (<reason>) -->`; the test lists those.
 */
interface Block {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  readonly skipReason: string | null;
}

const NOT_RUN = /^<!-- example: not run \((.+)\) -->$/;

function blocksOf(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i]!)) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
    const text = body.join('\n');
    if (!/\bcurl\b/.test(text)) continue;
    const marker = NOT_RUN.exec(lines[start - 1] ?? '');
    blocks.push({ file, line: start + 1, text, skipReason: marker ? marker[1]! : null });
  }
  return blocks;
}

const FILES = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const BLOCKS = FILES.flatMap(blocksOf);

/** curl as the examples call it, failing the script on an unexpected 4xx/5xx or no answer. */
const PRELUDE = readFileSync(new URL('./curl-prelude.sh', import.meta.url), 'utf8');

/** Lines the test itself stands in for: starting the server, and setting the key to a placeholder. */
const LEFT_OUT = /^[ \t]*(npm start|(export[ \t]+)?(KEY|SVC_API_KEY|SVC_JWT_SECRET)=\S*)([ \t].*)?$/gm;

/**
 * The status an example says it gets: a one-line curl ending in `# 404 …`, or a line `# expect: 404`
 * before a longer one, lets that one call answer it.
 */
function expectations(text: string): string {
  return text
    .replace(/^([ \t]*)# expect: (\d{3})\b.*$/gm, '$1export SVC_EXPECT=$2')
    .replace(/^([ \t]*)(curl [^\n]*[^\\\n])[ \t]+# (\d{3})\b(.*)$/gm, '$1export SVC_EXPECT=$3; $2 # $3$4');
}

/** One file's runnable blocks as one script: markers become checks, the address becomes the server's. */
function scriptOf(blocks: readonly Block[], address: string, opsAddress: string): string {
  const parts = blocks.map((block) => [`echo "--- ${block.file}:${block.line}" >&2`, expectations(block.text.replace(LEFT_OUT, ''))].join('\n'));
  return (PRELUDE + parts.join('\n'))
    .replace(/(https?:\/\/)?(localhost|127\.0\.0\.1):8080/g, `http://${address}`)
    .replace(/(https?:\/\/)?(localhost|127\.0\.0\.1):5432/g, `http://${opsAddress}`);
}

/** The HS256 secret docs/auth.md's example starts the server with. */
const DOCS_JWT_SECRET = 'change-me-to-at-least-32-characters!!';

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

describe('the docs examples run against a real server', () => {
  it('finds the examples, and every example not run says why', () => {
    expect(BLOCKS.length).toBeGreaterThan(10);
    for (const block of BLOCKS.filter((b) => b.skipReason !== null)) expect(block.skipReason!.length).toBeGreaterThan(5);
  });

  const byFile = new Map<string, Block[]>();
  for (const block of BLOCKS) if (block.skipReason === null) byFile.set(block.file, [...(byFile.get(block.file) ?? []), block]);

  for (const [file, blocks] of byFile) {
    it(`${file}: ${blocks.length} example block(s)`, async () => {
      // The settings the docs' examples assume of the server they run against.
      const env = { SVC_VECTOR_API_KEY: TEST_API_KEY, SVC_JWT_SECRET: DOCS_JWT_SECRET, SVC_OPS_PORT: String(await freePort()) };
      const server = await startTestServer({ env });
      servers.push(server);
      const address = server.baseUrl.replace(/^https?:\/\//, '');
      const opsAddress = server.opsUrl!.replace(/^https?:\/\//, '');
      const shell = { KEY: TEST_API_KEY, SVC_API_KEY: TEST_API_KEY, SVC_JWT_SECRET: DOCS_JWT_SECRET, SVC_DATA_DIR: server.dataDir };
      const { status, stdout, stderr } = await runBash(scriptOf(blocks, address, opsAddress), shell);
      expect(status, `${stderr}\n${stdout.slice(-2000)}`).toBe(0);
    }, 120_000);
  }
});
