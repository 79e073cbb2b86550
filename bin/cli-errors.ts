import { isSvcError } from '../core/errors.js';
import { UsageError } from './cli-args.js';

export interface Fatal {
  /** What goes to stderr, ending in a newline. */
  readonly text: string;
  readonly exitCode: 1 | 2;
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, ' ').trim();

/**
 * How the CLI reports an error that reached the top: one line, never a stack for operating
 * errors (SvcError) and usage errors; other errors add a hint, and the stack only at debug.
 */
export function describeFatal(error: unknown, debug: boolean): Fatal {
  if (error instanceof UsageError) return { text: `svcdb: ${oneLine(error.message)} (see svcdb --help)\n`, exitCode: 2 };
  if (isSvcError(error)) return { text: `svcdb: ${oneLine(error.message)}\n`, exitCode: 1 };
  const message = error instanceof Error ? error.message : String(error);
  const stack = debug && error instanceof Error && error.stack !== undefined ? `${error.stack}\n` : '';
  return { text: `svcdb: ${oneLine(message)} (run with SVC_LOG_LEVEL=debug for details)\n${stack}`, exitCode: 1 };
}

/** Debug output is on when the log level (flag or environment) is debug or trace. */
export function isDebugLevel(level: unknown): boolean {
  return level === 'debug' || level === 'trace';
}
