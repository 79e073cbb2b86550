#!/usr/bin/env -S node --max-semi-space-size=16
/**
 * The `svcdb` executable: parses the command line, resolves the settings, and hands over to the
 * composition root (./app.js). Wiring and printing only.
 */
import { pino } from 'pino';
import type { Config } from '../core/config.js';
import { SVC_VERSION } from '../core/version.js';
import type { AppCommands, ServeHandle } from './app-types.js';
import { parseCli, type ParsedCli } from './cli-args.js';
import { loadConfig } from './cli-config.js';
import { describeFatal, isDebugLevel } from './cli-errors.js';
import { helpText } from './cli-help.js';
import { createRootLogger } from './cli-logger.js';
import { formatInspect, formatRepair, formatReplay } from './cli-output.js';
import { createProgressReporter } from './cli-progress.js';
import { applyServeV8Settings } from './v8-settings.js';

/** Loaded only by commands that need the engine, so --help and usage errors stay instant. */
async function loadApp(): Promise<AppCommands> {
  const app: AppCommands = await import('./app.js');
  return app;
}

const print = (text: string): void => {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
};

/**
 * Offline commands print their result on stdout; their log lines go to stderr, and below warn
 * only when asked for (SVC_LOG_LEVEL=debug), so they do not bury the result.
 */
function commandLogger(config: Config): ReturnType<typeof createRootLogger> {
  const level = isDebugLevel(config.logLevel) ? config.logLevel : 'warn';
  return createRootLogger(level, pino.destination({ dest: 2, sync: true }));
}

async function run(cli: ParsedCli, config: Config): Promise<void> {
  switch (cli.command) {
    case 'serve':
      return serve(config);
    case 'replay': {
      const progress = createProgressReporter(process.stderr);
      const report = await (await loadApp()).replay(config, (p) => progress.update(p), commandLogger(config));
      progress.done();
      return print(formatReplay(report));
    }
    case 'inspect': {
      const report = await (await loadApp()).inspect(config, commandLogger(config));
      return print(cli.json ? JSON.stringify(report, null, 2) : formatInspect(report));
    }
    case 'repair':
      return print(formatRepair(await (await loadApp()).repair(config, commandLogger(config))));
    case 'keys':
      // Loaded on demand like app.js; touches only the key file, so it works beside a running server.
      return print(await (await import('./cli-keys.js')).runKeys(cli, config));
    case 'help':
      return print(helpText(SVC_VERSION));
  }
}

const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type StopSignal = keyof typeof SIGNAL_EXIT_CODES;
/** Time close() gets beyond shutdownTimeoutMs before the process gives up on it. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Start the server, log one line with its URLs, and stop on SIGTERM/SIGINT: the first signal
 * closes gracefully and exits 0, a second one exits at once. A signal during start-up is
 * honoured as soon as the server is up.
 */
async function serve(config: Config): Promise<void> {
  applyServeV8Settings();
  const logger = createRootLogger(config.logLevel);
  // Assigned once, but `stop` reads it before then (a signal during start-up): const would throw.
  // eslint-disable-next-line prefer-const
  let handle: ServeHandle | undefined;
  let stopping: StopSignal | undefined;

  const stop = (signal: StopSignal): void => {
    if (stopping !== undefined) {
      process.stderr.write(`svcdb: second ${signal}; exiting without finishing the shutdown\n`);
      process.exit(SIGNAL_EXIT_CODES[signal]);
    }
    stopping = signal;
    if (handle !== undefined) void shutdown(handle, signal, config);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  handle = await (await loadApp()).startServer(config, logger);
  logger.info({ httpUrl: handle.httpUrl, httpsUrl: handle.httpsUrl, opsUrl: handle.opsUrl, dataDir: config.dataDir, version: SVC_VERSION }, 'svcdb listening');
  if (handle.generatedApiKey !== null) {
    // Straight to the terminal, not into the structured log: shown this once, kept only hashed.
    process.stderr.write(`svcdb: admin API key (shown once; store it now): ${handle.generatedApiKey}\n`);
  }
  if (stopping !== undefined) void shutdown(handle, stopping, config);
}

async function shutdown(handle: ServeHandle, signal: StopSignal, config: Config): Promise<void> {
  setTimeout(() => {
    process.stderr.write(`svcdb: shutdown did not finish within ${config.shutdownTimeoutMs + CLOSE_GRACE_MS} ms; exiting\n`);
    process.exit(1);
  }, config.shutdownTimeoutMs + CLOSE_GRACE_MS).unref();
  try {
    await handle.close(signal);
  } catch (error) {
    exitWith(error, isDebugLevel(config.logLevel));
  }
  process.exit(0);
}

function exitWith(error: unknown, debug: boolean): never {
  const fatal = describeFatal(error, debug);
  process.stderr.write(fatal.text);
  process.exit(fatal.exitCode);
}

async function main(argv: readonly string[]): Promise<void> {
  let debug = isDebugLevel(process.env['SVC_LOG_LEVEL']);
  try {
    const cli = parseCli(argv);
    if (cli.version) return print(SVC_VERSION);
    if (cli.help) return print(helpText(SVC_VERSION));
    debug = isDebugLevel(cli.flags['log-level'] ?? process.env['SVC_LOG_LEVEL']);
    const config = await loadConfig(cli, process.env);
    debug = isDebugLevel(config.logLevel);
    await run(cli, config);
    // serve keeps running on its listeners; the other commands are done and must not linger on
    // a handle the engine left open.
    if (cli.command !== 'serve') process.exit(0);
  } catch (error) {
    exitWith(error, debug);
  }
}

void main(process.argv.slice(2));
