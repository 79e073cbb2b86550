import { readFile } from 'node:fs/promises';
import { resolveConfig, type Config } from '../core/config.js';
import { SvcError } from '../core/errors.js';
import type { ParsedCli } from './cli-args.js';

export const CONFIG_FILE_ENV = 'SVC_CONFIG';

/** Read the optional JSON config file (an object keyed by setting key). */
export async function readConfigFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? 'unknown error'})`;
    throw new SvcError('CONFIG_INVALID', `config file ${path} ${why} (--config / ${CONFIG_FILE_ENV})`, { path }, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SvcError('CONFIG_INVALID', `config file ${path} is not valid JSON: ${reason}`, { path }, error);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SvcError('CONFIG_INVALID', `config file ${path} must hold a JSON object keyed by setting (see svcdb --help)`, { path });
  }
  return parsed as Record<string, unknown>;
}

/** Settings from flags > environment > config file > defaults, validated and frozen. */
export async function loadConfig(cli: ParsedCli, env: NodeJS.ProcessEnv): Promise<Config> {
  const envPath = env[CONFIG_FILE_ENV];
  const filePath = cli.configPath ?? (envPath === undefined || envPath === '' ? undefined : envPath);
  if (filePath === undefined) return resolveConfig({ flags: cli.flags, env });
  return resolveConfig({ flags: cli.flags, env, file: await readConfigFile(filePath), filePath });
}
