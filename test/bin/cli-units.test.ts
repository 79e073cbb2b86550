import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from '../../core/errors.js';
import { SETTINGS } from '../../core/settings.js';
import { UsageError, parseCli } from '../../bin/cli-args.js';
import { loadConfig, readConfigFile } from '../../bin/cli-config.js';
import { describeFatal } from '../../bin/cli-errors.js';
import { helpText } from '../../bin/cli-help.js';
import { formatInspect, formatRepair, formatReplay } from '../../bin/cli-output.js';
import { createProgressReporter, progressBar } from '../../bin/cli-progress.js';

describe('parseCli', () => {
  it('defaults to serve and passes setting flags through', () => {
    const cli = parseCli(['--port', '9090', '--log-retention-enabled']);
    expect(cli.command).toBe('serve');
    expect(cli.flags).toEqual({ port: '9090', 'log-retention-enabled': true });
    expect(parseCli(['--no-log-retention-enabled']).flags).toEqual({ 'log-retention-enabled': false });
  });

  it('reads commands, --config, --json, help and version', () => {
    expect(parseCli(['inspect', '--data', '/d', '--json'])).toMatchObject({ command: 'inspect', json: true, flags: { data: '/d' } });
    expect(parseCli(['--config', 'c.json']).configPath).toBe('c.json');
    expect(parseCli(['help']).help).toBe(true);
    expect(parseCli(['-h']).help).toBe(true);
    expect(parseCli(['--version']).version).toBe(true);
  });

  it('turns mistakes into one-line usage errors', () => {
    const cases: [string[], string][] = [
      [['--bogus'], "unknown option '--bogus'"],
      [['frobnicate'], "unknown command 'frobnicate'; commands are serve, replay, inspect, repair, keys, help"],
      [['serve', 'extra'], "unexpected argument 'extra'"],
      [['--port'], "option '--port' needs a value"],
    ];
    for (const [argv, message] of cases) {
      const error = (() => {
        try {
          parseCli(argv);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error, argv.join(' ')).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(message);
    }
  });
});

describe('help text', () => {
  it('documents every command and every setting (flag, env, default, doc), never a secret value', () => {
    const text = helpText('7.0.0');
    for (const command of ['serve', 'replay', 'inspect', 'repair', 'help']) expect(text).toContain(`  ${command}`);
    for (const spec of SETTINGS) {
      expect(text).toContain(`--${spec.flag}`);
      expect(text).toContain(`env ${spec.env}, key ${spec.key}, default ${spec.defaultValue === undefined ? 'unset' : String(spec.defaultValue)}`);
      expect(text).toContain(spec.doc);
    }
    expect(text).toContain('secret: never logged or printed');
  });
});

describe('config loading', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svcdb-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('applies flag > environment > config file > default', async () => {
    const file = join(dir, 'ok.json');
    await writeFile(file, JSON.stringify({ httpPort: 1111, opsPort: 2222, host: '127.0.0.2', logLevel: 'warn' }));
    const config = await loadConfig(parseCli(['--port', '3333']), {
      SVC_CONFIG: file,
      SVC_HTTP_PORT: '4444',
      SVC_OPS_PORT: '5555',
    });
    expect(config).toMatchObject({ httpPort: 3333, opsPort: 5555, host: '127.0.0.2', logLevel: 'warn', dataDir: './data' });
  });

  it('--config wins over SVC_CONFIG, and a missing file is a one-line CONFIG_INVALID', async () => {
    const missing = join(dir, 'nope.json');
    const error = await loadConfig(parseCli(['--config', missing]), { SVC_CONFIG: join(dir, 'ok.json') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect((error as SvcError).message).toBe(`config file ${missing} does not exist (--config / SVC_CONFIG)`);
  });

  it('refuses bad JSON, non-objects and unknown keys', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ "httpPort": ');
    await expect(readConfigFile(bad)).rejects.toThrow(/^config file .*bad\.json is not valid JSON: /);
    const list = join(dir, 'list.json');
    await writeFile(list, '[1]');
    await expect(readConfigFile(list)).rejects.toThrow('must hold a JSON object keyed by setting');
    const unknown = join(dir, 'unknown.json');
    await writeFile(unknown, '{"colour": "blue"}');
    await expect(loadConfig(parseCli(['--config', unknown]), {})).rejects.toThrow(`unknown key "colour" in config file ${unknown}`);
  });
});

describe('fatal errors', () => {
  it('SvcError: one line, exit 1; usage: exit 2; others: hint, stack only at debug', () => {
    expect(describeFatal(new SvcError('CONFIG_INVALID', 'port 1 is\nin use'), true)).toEqual({ text: 'svcdb: port 1 is in use\n', exitCode: 1 });
    expect(describeFatal(new UsageError("unknown option '--x'"), false)).toEqual({
      text: "svcdb: unknown option '--x' (see svcdb --help)\n",
      exitCode: 2,
    });
    const plain = describeFatal(new TypeError('boom'), false);
    expect(plain).toEqual({ text: 'svcdb: boom (run with SVC_LOG_LEVEL=debug for details)\n', exitCode: 1 });
    const debug = describeFatal(new TypeError('boom'), true);
    expect(debug.text.split('\n').length).toBeGreaterThan(3);
    expect(debug.text).toContain('TypeError: boom\n    at ');
  });
});

describe('output', () => {
  it('formats the replay summary', () => {
    expect(formatReplay({ records: 12_000, elapsedMs: 1500 })).toBe('replayed 12000 records in 1.50 s (8000 records/s)');
    expect(formatReplay({ records: 0, elapsedMs: 0 })).toBe('replayed 0 records in 0.00 s (0 records/s)');
  });

  it('formats inspect and repair', () => {
    const modes = { dataDirMode: '0700', entries: 12, tooOpen: [], tooOpenCount: 0, truncated: false, allowed: '0700' as const };
    const text = formatInspect({
      modes,
      dataDir: '/d',
      segments: [{ file: '00000000000000000001.log', baseLsn: 1, lastLsn: 120, sizeBytes: 3 * 1024 * 1024 }],
      firstLsn: 1,
      lastLsn: 120,
      consumers: [{ name: 'tables', offsetLsn: 100 }],
      tables: 4,
      storeLocked: false,
    });
    expect(text).toContain('log: 1 segment(s), LSN 1..120');
    expect(text).toMatch(/00000000000000000001\.log\s+1\s+120\s+3\.0 MiB/);
    expect(text).toMatch(/tables\s+100\s+20/);
    expect(text).toContain('tables: 4');
    expect(text).toContain('modes: data dir 0700, 12 files and directories, none open beyond 0700');
    const fresh = formatInspect({
      modes,
      dataDir: '/d',
      segments: [{ file: 'a.log', baseLsn: 1, lastLsn: 0, sizeBytes: 0 }],
      firstLsn: 1,
      lastLsn: 0,
      consumers: [],
      tables: 0,
      storeLocked: false,
    });
    expect(fresh).toContain('log: 1 segment(s), no records yet');
    expect(fresh).toContain('consumers: none');
    expect(formatInspect({ modes, dataDir: '/d', segments: [], firstLsn: 1, lastLsn: 0, consumers: [], tables: 0, storeLocked: true })).toContain(
      'unknown (a running server holds the projection store',
    );
    const open = {
      ...modes,
      dataDirMode: '0755',
      tooOpen: [
        { path: '.', mode: '0755', kind: 'directory' as const },
        { path: 'log/1.log', mode: '0644', kind: 'file' as const },
      ],
      tooOpenCount: 2,
    };
    const opened = formatInspect({ modes: open, dataDir: '/d', segments: [], firstLsn: 1, lastLsn: 0, consumers: [], tables: 0, storeLocked: true });
    expect(opened).toContain('modes: data dir 0755, 12 files and directories, 2 open beyond 0700');
    expect(opened).toContain('chmod -R go-rwx /d fixes it');
    expect(opened).toMatch(/log\/1\.log\s+0644/);
    expect(formatRepair({ bytesTruncated: 0, segment: null })).toBe('log is intact; nothing to repair');
    expect(formatRepair({ bytesTruncated: 17, segment: 'x.log' })).toContain('truncated 17 bytes');
  });

  it('draws a bar on a TTY and plain lines elsewhere, throttled', () => {
    expect(progressBar({ recordsDone: 50, recordsTotal: 100 }, 1000)).toBe(`[${'#'.repeat(15)}${'-'.repeat(15)}]  50%  50/100 records  50 records/s`);
    let now = 0;
    const tty: string[] = [];
    const bar = createProgressReporter({ isTTY: true, write: (t: string) => tty.push(t) }, () => now);
    bar.update({ recordsDone: 1, recordsTotal: 10 });
    bar.update({ recordsDone: 2, recordsTotal: 10 });
    now = 200;
    bar.update({ recordsDone: 10, recordsTotal: 10 });
    bar.done();
    expect(tty).toHaveLength(3);
    expect(tty.every((t) => t.startsWith('\r['))).toBe(true);
    expect(tty.at(-1)).toMatch(/100%.*\n$/);

    const plain: string[] = [];
    const lines = createProgressReporter({ isTTY: false, write: (t: string) => plain.push(t) }, () => now);
    lines.update({ recordsDone: 1, recordsTotal: 4 });
    lines.update({ recordsDone: 2, recordsTotal: 4 });
    lines.done();
    expect(plain).toEqual(['replay: 1/4 records (25%)\n']);
  });

  it('shows rows/s beside records/s when replay counts rows', () => {
    expect(progressBar({ recordsDone: 50, recordsTotal: 100, rowsDone: 250 }, 1000)).toMatch(/ 50\/100 records {2}50 records\/s {2}250 rows\/s$/);
    const plain: string[] = [];
    createProgressReporter({ isTTY: false, write: (t: string) => plain.push(t) }, () => 0).update({ recordsDone: 1, recordsTotal: 4, rowsDone: 9 });
    expect(plain).toEqual(['replay: 1/4 records (25%, 9 rows)\n']);
  });
});

describe('node options of svcdb serve', () => {
  // A V8 heap size is fixed when node starts: every place that starts `svcdb serve` passes it (docs/configuration.md).
  it('passes --max-semi-space-size=16 in the executable, npm start and the Docker image', async () => {
    const { readFile } = await import('node:fs/promises');
    const flag = '--max-semi-space-size=16';
    const shebang = (await readFile('bin/svcdb.ts', 'utf8')).split('\n')[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${flag}`);
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['start']).toBe(`node ${flag} dist/bin/svcdb.js serve`);
    expect(await readFile('Dockerfile', 'utf8')).toContain(`CMD ["node", "${flag}", "dist/bin/svcdb.js", "serve"]`);
  });
});
