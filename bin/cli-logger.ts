import { pino, type DestinationStream, type Logger } from 'pino';

/** Credentials (and vectors, which are large and may be sensitive) never reach a log line. */
export const REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["api-key"]',
  'apiKey',
  'config.apiKey',
  'asyncQueryCallbackSecret',
  'config.asyncQueryCallbackSecret',
  'jwtSecret',
  'config.jwtSecret',
  'tlsKey',
  'config.tlsKey',
  'vectorApiKey',
  'config.vectorApiKey',
  'kafkaSaslPassword',
  'config.kafkaSaslPassword',
  'secret',
  '*.secret',
  'vector',
  '*.vector',
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
