import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { newUlid } from '../../core/ids.js';
import { SvcError } from '../../core/errors.js';
import { AUTH_LIMITS } from './limits.js';
import { ROLES, type Role } from './principal.js';
import { isTenantId, TENANT_ID_PATTERN } from './tenancy.js';

/**
 * API keys beside the admin key: a JSON file in the data directory, written whole to a temporary
 * file and renamed over the old one, so a reader (the running server) sees the old or the new
 * file, never half of one. `svcdb keys` edits it; the server re-reads it when it changes
 * (key-registry.ts). Only the SHA-256 of each key is kept (admin-key.ts says why that is enough).
 */
export const API_KEYS_FILE = 'api-keys.json';
const FORMAT = 'svcdb-api-keys';
const FORMAT_VERSION = 1;
const KEY_PREFIX = 'svc_';

/** One stored key. Field names are the file's (snake_case, as the REST API's). */
export interface ApiKeyRecord {
  readonly id: string;
  readonly name: string | null;
  readonly role: Role;
  /** Bound tenant; null: unbound (the default tenant, and an admin may choose any). */
  readonly tenant: string | null;
  /** Its own requests per rate-limit window; null: the server's rateLimitRequestsMax. */
  readonly rate_limit_max: number | null;
  readonly sha256: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
}

/** What `svcdb keys list` shows: everything but the hash. */
export type ApiKeyInfo = Omit<ApiKeyRecord, 'sha256'>;

export interface NewApiKey {
  readonly role: Role;
  readonly tenant: string | null;
  readonly name: string | null;
  readonly rateLimitRequestsMax: number | null;
}

export const apiKeysFile = (dataDir: string): string => path.join(dataDir, API_KEYS_FILE);

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function keyInfo(record: ApiKeyRecord): ApiKeyInfo {
  const { sha256: _hash, ...info } = record;
  return info;
}

/** The keys of a data directory ([] when it has none yet). */
export async function readApiKeys(dataDir: string): Promise<ApiKeyRecord[]> {
  const file = apiKeysFile(dataDir);
  let text: string;
  try {
    const info = await stat(file);
    if (info.size > AUTH_LIMITS.keyFileBytesMax) throw corrupt(file, `it is larger than ${AUTH_LIMITS.keyFileBytesMax} bytes`);
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return parseApiKeys(text, file);
}

/** Create a key: returns the key itself (to be shown once) and what is stored. */
export async function createApiKey(dataDir: string, spec: NewApiKey, now: Date = new Date()): Promise<{ key: string; record: ApiKeyRecord }> {
  checkNewKey(spec);
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  const record: ApiKeyRecord = {
    id: `key_${newUlid()}`,
    name: spec.name,
    role: spec.role,
    tenant: spec.tenant,
    rate_limit_max: spec.rateLimitRequestsMax,
    sha256: sha256Hex(key),
    created_at: now.toISOString(),
    revoked_at: null,
  };
  await updateApiKeys(dataDir, (keys) => {
    if (keys.length >= AUTH_LIMITS.apiKeysMax) {
      throw new SvcError('LIMIT_EXCEEDED', `a data directory holds at most ${AUTH_LIMITS.apiKeysMax} API keys (revoked ones included)`, {
        max_keys: AUTH_LIMITS.apiKeysMax,
      });
    }
    return [...keys, record];
  });
  return { key, record };
}

/** Revoke a key by id; revoking a revoked key changes nothing. Unknown id: NOT_FOUND. */
export async function revokeApiKey(dataDir: string, id: string, now: Date = new Date()): Promise<{ record: ApiKeyRecord; alreadyRevoked: boolean }> {
  let result: { record: ApiKeyRecord; alreadyRevoked: boolean } | undefined;
  await updateApiKeys(dataDir, (keys) => {
    const found = keys.find((k) => k.id === id);
    if (found === undefined) throw new SvcError('NOT_FOUND', `no API key with id ${id} (svcdb keys list shows them)`, { id });
    if (found.revoked_at !== null) {
      result = { record: found, alreadyRevoked: true };
      return null;
    }
    const revoked = { ...found, revoked_at: now.toISOString() };
    result = { record: revoked, alreadyRevoked: false };
    return keys.map((k) => (k === found ? revoked : k));
  });
  return result!;
}

function checkNewKey(spec: NewApiKey): void {
  const invalid = (message: string, field: string): never => {
    throw new SvcError('VALIDATION_ERROR', message, { field });
  };
  if (!ROLES.includes(spec.role)) invalid(`role must be one of ${ROLES.join(', ')}, got ${JSON.stringify(spec.role)}`, 'role');
  if (spec.tenant !== null && !isTenantId(spec.tenant)) invalid(`tenant must match ${TENANT_ID_PATTERN.source}`, 'tenant');
  if (spec.name !== null && (spec.name.length > AUTH_LIMITS.keyNameCharsMax || !/^[\x20-\x7e]+$/.test(spec.name))) {
    invalid(`name must be 1 to ${AUTH_LIMITS.keyNameCharsMax} printable ASCII characters`, 'name');
  }
  const max = spec.rateLimitRequestsMax;
  if (max !== null && !(Number.isSafeInteger(max) && max >= 1 && max <= 1_000_000_000)) {
    invalid('rate limit must be an integer from 1 to 1000000000', 'rate_limit_max');
  }
}

/**
 * Read, change and atomically replace the file under a lock file, so two `svcdb keys` commands
 * at once cannot lose each other's change. `change` returns null to leave the file as it is.
 */
async function updateApiKeys(dataDir: string, change: (keys: ApiKeyRecord[]) => ApiKeyRecord[] | null): Promise<void> {
  const file = apiKeysFile(dataDir);
  const release = await lockFile(`${file}.lock`);
  try {
    const next = change(await readApiKeys(dataDir));
    if (next === null) return;
    const body = JSON.stringify({ format: FORMAT, version: FORMAT_VERSION, keys: next }, null, 2) + '\n';
    const tmp = `${file}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(body, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, file);
  } finally {
    await release();
  }
}

/** An exclusive lock file; one left by a command that died is taken over once it is stale. */
async function lockFile(lock: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + AUTH_LIMITS.keyFileLockWaitMs;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.close();
      return () => unlink(lock).catch(() => undefined);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = await stat(lock).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > AUTH_LIMITS.keyFileLockStaleMs) {
      await unlink(lock).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw new SvcError('DATA_DIR_LOCKED', `${lock} is held by another svcdb keys command; retry, or delete it if none is running`, { lock });
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const corrupt = (file: string, why: string): SvcError =>
  new SvcError('DATA_DIR_INVALID', `${file} is corrupt (${why}); restore it from a backup, or delete it to drop every API key`, { file });

/** Parse and check the whole file: one bad entry makes it corrupt rather than silently skipped. */
export function parseApiKeys(text: string, file: string): ApiKeyRecord[] {
  let parsed: { format?: unknown; version?: unknown; keys?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (error) {
    throw corrupt(file, (error as Error).message);
  }
  if (parsed?.format !== FORMAT || parsed.version !== FORMAT_VERSION || !Array.isArray(parsed.keys)) {
    throw corrupt(file, `expected format ${FORMAT} version ${FORMAT_VERSION}`);
  }
  return parsed.keys.map((entry: unknown, i: number) => {
    if (!isRecord(entry)) throw corrupt(file, `entry ${i} is malformed`);
    return entry;
  });
}

function isRecord(value: unknown): value is ApiKeyRecord {
  const r = value as Partial<ApiKeyRecord> | null;
  const nullOr = (v: unknown, check: (x: unknown) => boolean): boolean => v === null || check(v);
  const isString = (x: unknown): boolean => typeof x === 'string';
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.id === 'string' &&
    typeof r.created_at === 'string' &&
    typeof r.sha256 === 'string' &&
    /^[0-9a-f]{64}$/.test(r.sha256) &&
    ROLES.includes(r.role as Role) &&
    nullOr(r.name, isString) &&
    nullOr(r.tenant, isTenantId) &&
    nullOr(r.revoked_at, isString) &&
    nullOr(r.rate_limit_max, (x) => Number.isSafeInteger(x) && (x as number) >= 1)
  );
}
