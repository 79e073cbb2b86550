import { SETTINGS, type SettingSpec } from '../core/settings.js';

const COMMAND_HELP: readonly (readonly [string, string])[] = [
  ['serve', 'Start the server (the default command)'],
  ['replay --data DIR', 'Rebuild every projection from the log, with a progress bar'],
  ['inspect --data DIR [--json]', 'Print the log segments, LSN range, consumers and their offsets, table count'],
  ['repair --data DIR', 'Truncate the log at its first corrupt record (after a LOG_CORRUPT error)'],
  ['keys create [--role R] [--tenant T]', 'Create an API key and print it once: role admin, read_write (default) or read_only;'],
  ['  [--name N] [--rate-limit-max N]', 'a tenant binds it to that tenant; --rate-limit-max gives it its own limit'],
  ['keys list [--json]', 'List the API keys: id, name, role, tenant, created, revoked (never the keys)'],
  ['keys revoke ID', 'Revoke an API key (a running server refuses it within about a second; docs/auth.md)'],
  ['help', 'Show this help'],
];

const OPTION_HELP: readonly (readonly [string, string])[] = [
  ['--config FILE', 'JSON config file keyed by setting key (below); also SVC_CONFIG. Optional'],
  ['--json', 'inspect, keys: print JSON'],
  ['--role, --tenant, --name', "keys create: the new key's role, tenant and name"],
  ['-h, --help', 'Show this help'],
  ['--version', 'Print the version'],
];

function placeholder(spec: SettingSpec): string {
  if (spec.type === 'bool') return '';
  if (spec.type === 'int') return ' N';
  if (spec.type === 'string') return spec.key.endsWith('Dir') ? ' DIR' : ' TEXT';
  return ` ${spec.type.enum.join('|')}`;
}

function defaultText(spec: SettingSpec): string {
  if (spec.defaultValue === undefined) return 'unset';
  return String(spec.defaultValue);
}

/** One entry per setting: flag, env var, config key, default, doc. Values of secrets are never shown. */
export function settingsHelp(): string {
  return SETTINGS.map((spec: SettingSpec) => {
    const flag = spec.type === 'bool' ? `--${spec.flag}, --no-${spec.flag}` : `--${spec.flag}${placeholder(spec)}`;
    const secret = spec.secret === true ? '; secret: never logged or printed' : '';
    return `  ${flag}\n      env ${spec.env}, key ${spec.key}, default ${defaultText(spec)}${secret}\n      ${spec.doc}`;
  }).join('\n');
}

function table(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join('\n');
}

/** The whole `svcdb --help` text. */
export function helpText(version: string): string {
  return [
    `svcdb ${version}: a multi-protocol database whose one source of truth is an append-only log`,
    '',
    'Usage: svcdb [command] [options]',
    '',
    'Commands:',
    table(COMMAND_HELP),
    '',
    'Options:',
    table(OPTION_HELP),
    '',
    'Settings (precedence: flag > environment > config file > default):',
    settingsHelp(),
    '',
    'Exit codes: 0 ok, 1 error (one line on stderr), 2 usage error.',
    '',
  ].join('\n');
}
