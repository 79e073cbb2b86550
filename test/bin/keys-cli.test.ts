/**
 * `svcdb keys create | list | revoke` (the built dist/bin/svcdb.js) against a data directory with
 * no server, and beside a running server, which picks up new and revoked keys within a second or so.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../bin/app.js';
import type { ServeHandle } from '../../bin/app-types.js';
import { parseCli, UsageError } from '../../bin/cli-args.js';
import { bearer, query, untilStatus } from '../helpers/auth.js';
import { CLI, lines, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/stack.js';
import { testConfig } from '../protocols/helpers.js';

const ADMIN_KEY = 'keys-cli-admin-key';

interface CreatedKey {
  readonly id: string;
  readonly key: string;
}

describe('svcdb keys', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let dataDir = '';
  let server: ServeHandle | null = null;
  const start = async (): Promise<string> => {
    server = await startServer(testConfig({ data: dataDir, 'api-key': ADMIN_KEY, 'log-level': 'silent' }), pino({ level: 'silent' }));
    return server.httpUrl.replace(/\/$/, '');
  };
  const stop = async (): Promise<void> => {
    await server?.close('test');
    server = null;
  };
  const keys = (args: string[]) => runCli(['keys', ...args, '--data', dataDir]);
  const create = async (args: string[]): Promise<CreatedKey> => {
    const result = await keys(['create', ...args, '--json']);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as CreatedKey;
  };

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (\`npm test\` does)`);
    dir = await tempDir('svcdb-keys-cli-');
    dataDir = join(dir.dir, 'data');
  });
  afterAll(async () => {
    await stop();
    await dir?.remove();
  });

  it('create (before the first start) prints the key once; list never shows keys or hashes', async () => {
    const created = await keys(['create', '--role', 'read_only', '--name', 'ci reader']);
    expect(created.code, created.stderr).toBe(0);
    const id = /created API key (key_\w+)/.exec(created.stdout)?.[1];
    const key = /\b(svc_[A-Za-z0-9_-]{43})\b/.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    expect(key).toBeDefined();

    const listed = await keys(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`${id}\\s+ci reader\\s+read_only\\s+-\\s+-\\s+\\S+Z\\s+-`));
    const stored = JSON.parse(await readFile(join(dataDir, 'api-keys.json'), 'utf8')) as { keys: { sha256: string }[] };
    const hash = stored.keys[0]!.sha256;
    const json = await keys(['list', '--json']);
    for (const output of [listed.stdout, json.stdout]) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(hash);
    }
    expect(JSON.parse(json.stdout)).toEqual([
      { id, name: 'ci reader', role: 'read_only', tenant: null, rate_limit_max: null, created_at: expect.any(String), revoked_at: null },
    ]);
  });

  it('a running server honours keys created and revoked beside it', async () => {
    const first = JSON.parse((await keys(['list', '--json'])).stdout)[0] as { id: string };
    const url = await start();
    const second = await create(['--role', 'read_write', '--tenant', 'acme', '--rate-limit-max', '7']);
    await untilStatus(url, second.key, 200);
    const answer = await query(url, bearer(second.key), 'CREATE TABLE made_by_key (id INT PRIMARY KEY)');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('7');
    expect((await query(url, { ...bearer(ADMIN_KEY), 'x-tenant-id': 'acme' }, 'SELECT * FROM made_by_key')).status).toBe(200);

    const revoked = await keys(['revoke', second.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout.trim()).toBe(`revoked ${second.id}`);
    // Waits for the refusal itself; how soon it comes (checkIntervalMs) is key-registry.test.ts's, on an injected clock.
    await untilStatus(url, second.key, 401);
    const listed = JSON.parse((await keys(['list', '--json'])).stdout) as { id: string; revoked_at: string | null }[];
    expect(listed.map((k) => [k.id, k.revoked_at === null])).toEqual([
      [first.id, true],
      [second.id, false],
    ]);
    await stop();
  });

  it('a key revoked while the server is stopped is refused after the next start', async () => {
    const third = await create(['--role', 'admin']);
    let url = await start();
    expect((await query(url, bearer(third.key), 'SELECT 1')).status).toBe(200);
    await stop();
    expect((await keys(['revoke', third.id])).code).toBe(0);
    const again = await keys(['revoke', third.id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/already revoked at /);
    url = await start();
    const refused = await query(url, bearer(third.key), 'SELECT 1');
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/revoked/);
    await stop();
  });

  it('mistakes are one line: exit 2 for usage, 1 for a bad value or an unknown id', async () => {
    const cases: [string[], number, RegExp][] = [
      [['frob'], 2, /^svcdb: unknown keys subcommand 'frob'; use create, list or revoke \(see svcdb --help\)$/],
      [['revoke'], 2, /^svcdb: keys revoke needs the id of a key/],
      [['revoke', 'key_nope'], 1, /^svcdb: no API key with id key_nope/],
      [['create', '--role', 'boss'], 1, /^svcdb: role must be one of admin, read_write, read_only/],
      [['create', '--tenant', 'a/b'], 1, /^svcdb: tenant must match/],
      [['create', '--rate-limit-max', 'lots'], 1, /^svcdb: --rate-limit-max must be an integer/],
    ];
    for (const [args, code, message] of cases) {
      const result = await keys(args);
      expect(result.code, args.join(' ')).toBe(code);
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr.trim()).toMatch(message);
    }
    const notData = await runCli(['keys', 'list', '--data', join(dir.dir, 'missing')]);
    expect(notData.code).toBe(1);
    expect(notData.stderr).toMatch(/holds no svcdb data/);
  });

  it('parses keys arguments; the keys options belong to keys only', () => {
    expect(parseCli(['keys', 'revoke', 'key_1'])).toMatchObject({ command: 'keys', args: ['revoke', 'key_1'] });
    expect(parseCli(['keys', 'create', '--role', 'read_only', '--tenant', 't', '--name', 'n', '--rate-limit-max', '5'])).toMatchObject({
      args: ['create'],
      keyOptions: { role: 'read_only', tenant: 't', name: 'n' },
      flags: { 'rate-limit-max': '5' },
    });
    expect(() => parseCli(['serve', '--role', 'admin'])).toThrow(UsageError);
    expect(() => parseCli(['inspect', 'extra'])).toThrow(UsageError);
  });
});
