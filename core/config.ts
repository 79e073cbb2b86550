import { SvcError } from './errors.js';
import { SETTINGS, type SettingSpec } from './settings.js';

type SettingValue<S extends SettingSpec> = S['type'] extends 'int'
  ? number
  : S['type'] extends 'bool'
    ? boolean
    : S['type'] extends { enum: readonly (infer E)[] }
      ? E
      : string;

type Settings = (typeof SETTINGS)[number];

/** The resolved, validated, frozen configuration. Optional settings are undefined when unset. */
export type Config = {
  readonly [S in Settings as S['key']]: S['defaultValue'] extends undefined ? SettingValue<S> | undefined : SettingValue<S>;
};

export interface ConfigSources {
  /** Parsed command-line flags, by flag name (without the leading dashes). */
  readonly flags?: Readonly<Record<string, string | boolean | undefined>>;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The parsed config file (an object keyed by setting key). */
  readonly file?: Readonly<Record<string, unknown>>;
  /** Where the file came from, for error messages. */
  readonly filePath?: string;
}

/** Resolve every setting from flags > environment > config file > default, validate, freeze. */
export function resolveConfig(sources: ConfigSources): Config {
  const file = sources.file ?? {};
  const known = new Set<string>(SETTINGS.map((s) => s.key));
  for (const key of Object.keys(file)) {
    if (!known.has(key)) {
      const renamed = RENAMED_KEYS[key];
      const hint = renamed ? ` (renamed to "${renamed}": limits carry their unit last)` : '';
      throw new SvcError('CONFIG_INVALID', `unknown key "${key}" in config file ${sources.filePath ?? ''}`.trim() + hint, { key });
    }
  }
  const config: Record<string, unknown> = {};
  for (const spec of SETTINGS as readonly SettingSpec[]) {
    const flagValue = sources.flags?.[spec.flag];
    const envValue = sources.env?.[spec.env];
    if (flagValue !== undefined) config[spec.key] = parseValue(spec, flagValue, `--${spec.flag}`);
    else if (envValue !== undefined && envValue !== '') config[spec.key] = parseValue(spec, envValue, spec.env);
    else if (file[spec.key] !== undefined) config[spec.key] = parseValue(spec, file[spec.key], `config key ${spec.key}`);
    else config[spec.key] = spec.defaultValue;
  }
  checkRelations(config as Config);
  return Object.freeze(config) as Config;
}

/** Config file keys of earlier versions, to say what they are called now (environment variables and flags kept their names). */
const RENAMED_KEYS: Readonly<Record<string, string>> = {
  maxResultRows: 'resultRowsMax',
  maxConnections: 'connectionsMax',
  maxQuerySizeBytes: 'queryTextBytesMax',
  vectorBatchSize: 'vectorUpsertCountMax',
  vectorMaxDimension: 'vectorDimensionsMax',
  vectorMaxVectors: 'vectorIndexRecordsMax',
  vectorMaxMetadataBytes: 'vectorMetadataBytesMax',
  vectorEfSearch: 'vectorEfSearchDefault',
  rateLimitMax: 'rateLimitRequestsMax',
};

type IntKey = { [K in keyof Config]: Config[K] extends number ? K : never }[keyof Config];

/** Settings that must not exceed another, each bound alone being valid (TigerBeetle: limits are checked together at start). */
const RELATIONS: readonly { readonly smaller: IntKey; readonly larger: IntKey; readonly why: string }[] = [
  { smaller: 'headersTimeoutMs', larger: 'requestTimeoutMs', why: 'the headers are part of the request' },
  { smaller: 'transactionTimeoutMsDefault', larger: 'transactionTimeoutMsMax', why: 'the default must be a timeout a client may ask for' },
  { smaller: 'asyncQueryConcurrencyMax', larger: 'asyncQueriesMax', why: 'a running async query is one of the records held' },
];

/** Refuses (CONFIG_INVALID) settings that contradict each other. */
function checkRelations(config: Config): void {
  for (const { smaller, larger, why } of RELATIONS) {
    if (config[smaller] > config[larger]) {
      throw new SvcError('CONFIG_INVALID', `${smaller} (${config[smaller]}) must not be larger than ${larger} (${config[larger]}): ${why}`, {
        setting: smaller,
      });
    }
  }
}

function parseValue(spec: SettingSpec, raw: unknown, source: string): unknown {
  const fail = (expected: string): never => {
    // A secret's value is never echoed, not even a wrong one (it may be the right one mistyped).
    const got = spec.secret === true ? 'a value that is not shown (secret)' : JSON.stringify(raw);
    throw new SvcError('CONFIG_INVALID', `${source} must be ${expected}, got ${got}`, { setting: spec.key });
  };
  const type = spec.type;
  if (type === 'string') {
    if (typeof raw !== 'string' || raw === '') fail('a non-empty string');
    return raw;
  }
  if (type === 'bool') {
    if (typeof raw === 'boolean') return raw;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    return fail('true or false');
  }
  if (type === 'int') {
    const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value)) fail('an integer');
    if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
      fail(`an integer from ${spec.min} to ${spec.max}`);
    }
    return value;
  }
  if (typeof raw !== 'string' || !type.enum.includes(raw)) fail(`one of ${type.enum.join(', ')}`);
  return raw;
}

/** The setting table, for `svcdb --help`. */
export { SETTINGS };
