import { pino, type DestinationStream, type Logger } from 'pino';
import { SETTINGS, type SettingSpec } from '../core/settings.js';

/** Settings marked secret (the admin key, the JWT secret, the callback secret, TLS key, vector key). */
const SECRET_SETTINGS: readonly string[] = (SETTINGS as readonly SettingSpec[]).filter((s) => s.secret === true).map((s) => s.key);

/**
 * Credentials, secrets and vectors (large, and they may encode what they embed) never reach a log
 * line, at any level. Paths are pino's (one level of `*`); the suite test/security/secrets-in-logs
 * greps a debug-level log of a run that used every kind of secret.
 */
export const REDACT_PATHS: readonly string[] = [
  // Request headers that carry credentials, wherever a request or its headers are logged.
  ...['authorization', '["x-api-key"]', '["api-key"]', 'cookie', '["proxy-authorization"]']
    .map((h) => (h.startsWith('[') ? h : `.${h}`))
    .flatMap((h) => [`req.headers${h}`, `headers${h}`, `*.headers${h}`]),
  // The raw bytes of a request node's parser refused (they hold its headers).
  'err.rawPacket',
  '*.rawPacket',
  // Secret settings, alone or inside a config object.
  ...SECRET_SETTINGS.flatMap((key) => [key, `config.${key}`, `*.${key}`]),
  // Credentials and secrets under their usual names (webhook secrets, tokens).
  ...['secret', 'token', 'jwt', 'password', 'key'].flatMap((name) => [name, `*.${name}`]),
  // Vectors: the REST field, the vector protocol's values and sparse values, batches of them.
  ...['vector', 'vectors', 'values', 'sparse_values', 'sparseValues', 'embedding'].flatMap((name) => [name, `*.${name}`]),
];

/** The one root logger of the process: JSON lines on stdout, level from the config. */
export function createRootLogger(level: string, destination: DestinationStream = pino.destination({ dest: 1, sync: true })): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    },
    destination,
  );
}
