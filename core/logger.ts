/**
 * The logging interface every layer takes. A pino logger satisfies it; the root logger is made in
 * the composition root and passed down as `child({ component })`. Object first, constant message.
 */
export interface Logger {
  trace(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything (tests and library use). */
export const silentLogger: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};
