import { parseArgs, type ParseArgsConfig } from 'node:util';
import { SETTINGS } from '../core/settings.js';

export const COMMANDS = ['serve', 'replay', 'inspect', 'repair', 'keys', 'help'] as const;
export type Command = (typeof COMMANDS)[number];

/** A mistake in how svcdb was called: one line on stderr, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ParsedCli {
  readonly command: Command;
  /** Setting flags as given (strings, or booleans for bool settings), for resolveConfig. */
  readonly flags: Readonly<Record<string, string | boolean | undefined>>;
  readonly configPath: string | undefined;
  readonly json: boolean;
  readonly help: boolean;
  readonly version: boolean;
  /** Words after the command: only `keys` takes them (`keys revoke <id>`). */
  readonly args: readonly string[];
  /** `keys create` options: --role, --tenant, --name. */
  readonly keyOptions: Readonly<Record<'role' | 'tenant' | 'name', string | undefined>>;
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The CLI's own options, beside one per setting of core/settings.ts. */
export const CLI_OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  role: { type: 'string' },
  tenant: { type: 'string' },
  name: { type: 'string' },
} as const satisfies Options;

const KEY_OPTIONS = ['role', 'tenant', 'name'] as const;

function options(): Options {
  const all: Options = { ...CLI_OPTIONS };
  for (const spec of SETTINGS) all[spec.flag] = { type: spec.type === 'bool' ? 'boolean' : 'string' };
  return all;
}

/** Parse argv (without node and the script). Throws UsageError. */
export function parseCli(argv: readonly string[]): ParsedCli {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: options(), strict: true, allowPositionals: true, allowNegative: true });
  } catch (error) {
    throw new UsageError(usageMessage(error));
  }
  const { values, positionals } = parsed;
  const [first, ...rest] = positionals;
  const command = first ?? 'serve';
  if (!(COMMANDS as readonly string[]).includes(command)) {
    throw new UsageError(`unknown command '${command}'; commands are ${COMMANDS.join(', ')}`);
  }
  if (command !== 'keys' && rest.length > 0) throw new UsageError(`unexpected argument '${rest[0]}'`);
  const keyOptions = { role: stringOf(values['role']), tenant: stringOf(values['tenant']), name: stringOf(values['name']) };
  const misplaced = KEY_OPTIONS.find((o) => keyOptions[o] !== undefined);
  if (command !== 'keys' && misplaced !== undefined) throw new UsageError(`option '--${misplaced}' is only for svcdb keys create`);
  const flags: Record<string, string | boolean | undefined> = {};
  for (const spec of SETTINGS) {
    const value = values[spec.flag];
    if (value !== undefined && typeof value !== 'object') flags[spec.flag] = value;
  }
  const config = values['config'];
  return {
    command: command as Command,
    flags,
    configPath: typeof config === 'string' ? config : undefined,
    json: values['json'] === true,
    help: values['help'] === true || command === 'help',
    version: values['version'] === true,
    args: command === 'keys' ? rest : [],
    keyOptions,
  };
}

const stringOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** node's parseArgs messages are long and advise on `--`; keep the first clause, one line. */
function usageMessage(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(-[^' ]+)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) return `unknown option '${option}'`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    return message.includes('argument missing') ? `option '${option}' needs a value` : `option '${option}' does not take a value`;
  }
  return message.split(/\.\s|\n/)[0] ?? message;
}
