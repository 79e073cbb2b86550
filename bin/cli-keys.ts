/**
 * `svcdb keys create | list | revoke`: API keys in the data directory's key file. The file is not
 * behind the LevelDB lock, so these work while a server runs; it notices within about a second.
 */
import { existsSync } from 'node:fs';
import type { Config } from '../core/config.js';
import { dataDirLayout, prepareDataDir } from '../projections/index.js';
import { createApiKey, keyInfo, readApiKeys, revokeApiKey, type ApiKeyInfo, type NewApiKey } from '../protocols/index.js';
import { UsageError, type ParsedCli } from './cli-args.js';
import { columns } from './cli-output.js';

/** Run a keys subcommand; returns what to print on stdout. */
export async function runKeys(cli: ParsedCli, config: Config): Promise<string> {
  const [sub, ...rest] = cli.args;
  const extra = (max: number): void => {
    if (rest.length > max) throw new UsageError(`unexpected argument '${rest[max]}'`);
  };
  switch (sub) {
    case 'create': {
      extra(0);
      const root = await keysDir(config, true);
      const { key, record } = await createApiKey(root, newKeyOf(cli));
      const info = keyInfo(record);
      return cli.json ? JSON.stringify({ ...info, key }, null, 2) : formatCreated(info, key);
    }
    case 'list': {
      extra(0);
      const keys = (await readApiKeys(await keysDir(config, false))).map(keyInfo);
      return cli.json ? JSON.stringify(keys, null, 2) : formatList(keys);
    }
    case 'revoke': {
      const id = rest[0];
      if (id === undefined) throw new UsageError('keys revoke needs the id of a key (svcdb keys list shows them)');
      extra(1);
      const { record, alreadyRevoked } = await revokeApiKey(await keysDir(config, false), id);
      if (cli.json) return JSON.stringify(keyInfo(record), null, 2);
      return alreadyRevoked ? `${record.id} was already revoked at ${record.revoked_at}` : `revoked ${record.id}`;
    }
    default:
      throw new UsageError(
        sub === undefined ? 'keys needs a subcommand: create, list or revoke' : `unknown keys subcommand '${sub}'; use create, list or revoke`,
      );
  }
}

/**
 * The data directory's root. An svcdb directory is used as it is (no start-up clean-up: a server
 * or a replay may be running); a missing or empty one is made by `keys create`, so keys can be
 * issued before the first start.
 */
async function keysDir(config: Config, create: boolean): Promise<string> {
  const layout = dataDirLayout(config.dataDir);
  if (!existsSync(layout.markerFile)) await prepareDataDir(config.dataDir, { create, mode: config.dataDirMode });
  return layout.root;
}

/**
 * `--rate-limit-max` is the server's setting flag (so loadConfig has already checked its range);
 * on `keys create` it is the new key's own limit. SVC_RATE_LIMIT_MAX does not count here.
 */
function newKeyOf(cli: ParsedCli): NewApiKey {
  const limit = cli.flags['rate-limit-max'];
  return {
    role: (cli.keyOptions.role ?? 'read_write') as NewApiKey['role'],
    tenant: cli.keyOptions.tenant ?? null,
    name: cli.keyOptions.name ?? null,
    rateLimitRequestsMax: typeof limit === 'string' ? Number(limit) : null,
  };
}

function formatCreated(info: ApiKeyInfo, key: string): string {
  return [
    `created API key ${info.id}`,
    ...columns([
      ['role', info.role],
      ['tenant', info.tenant ?? 'default (unbound)'],
      ['name', info.name ?? '-'],
      ['rate limit', info.rate_limit_max === null ? 'server default' : `${info.rate_limit_max} per window`],
      ['key', key],
    ]),
    'Store the key now: only its SHA-256 is kept, it cannot be shown again.',
  ].join('\n');
}

function formatList(keys: readonly ApiKeyInfo[]): string {
  if (keys.length === 0) return 'no API keys (svcdb keys create makes one)';
  return columns([
    ['id', 'name', 'role', 'tenant', 'rate limit', 'created', 'revoked'],
    ...keys.map((k) => [
      k.id,
      k.name ?? '-',
      k.role,
      k.tenant ?? '-',
      k.rate_limit_max === null ? '-' : String(k.rate_limit_max),
      k.created_at,
      k.revoked_at ?? '-',
    ]),
  ]).join('\n');
}
