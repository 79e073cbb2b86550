import type { FastifyBaseLogger } from 'fastify';

type Bindings = Record<string, unknown>;
type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogFn = (...args: unknown[]) => void;

/** The parts of a pino logger this file uses beyond FastifyBaseLogger. */
interface PinoLike extends FastifyBaseLogger {
  isLevelEnabled(level: string): boolean;
  setBindings(bindings: Bindings): void;
  bindings(): Bindings;
}

/**
 * The logger of one request, made only when the request logs something. fastify gives every
 * request a child logger with its request id; a pino child costs its bindings' serialization
 * (redaction included) on every request, and with the default level (info; request lines at
 * debug) most requests never log a line. Same lines, same bindings as the child it stands for.
 */
export class LazyRequestLogger {
  private real: PinoLike | null = null;
  private added: Bindings | null = null;

  constructor(
    private readonly parent: PinoLike,
    private readonly own: Bindings,
  ) {}

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.resolve().level = level;
  }

  // Methods on the prototype, not closures per instance: one logger is made for every request.
  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }

  error(...args: unknown[]): void {
    this.log('error', args);
  }

  warn(...args: unknown[]): void {
    this.log('warn', args);
  }

  info(...args: unknown[]): void {
    this.log('info', args);
  }

  debug(...args: unknown[]): void {
    this.log('debug', args);
  }

  trace(...args: unknown[]): void {
    this.log('trace', args);
  }

  silent(): void {}

  isLevelEnabled(level: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.resolve().child(bindings, options);
  }

  /** pino's setBindings: kept until the logger is made (the auth hook names the caller this way). */
  setBindings(bindings: Bindings): void {
    if (this.real !== null) this.real.setBindings(bindings);
    // The first bindings are kept as given (the auth hook's are one frozen object per credential): no copy per request.
    else this.added = this.added === null ? bindings : { ...this.added, ...bindings };
  }

  bindings(): Bindings {
    return this.real?.bindings() ?? { ...this.parent.bindings(), ...this.own, ...this.added };
  }

  private log(level: LevelName, args: unknown[]): void {
    if (this.real === null && !this.parent.isLevelEnabled(level)) return;
    (this.resolve()[level] as LogFn)(...args);
  }

  private resolve(): PinoLike {
    if (this.real === null) {
      this.real = this.parent.child(this.added === null ? this.own : { ...this.own, ...this.added }) as PinoLike;
      this.added = null;
    }
    return this.real;
  }
}

/**
 * fastify's childLoggerFactory: a lazy request logger when the parent is a pino logger and the
 * route asks for nothing special (a route's own logLevel or serializers get a real child at once).
 */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: object): FastifyBaseLogger {
  const pino = logger as Partial<PinoLike>;
  if (Object.keys(options).length > 0 || typeof pino.isLevelEnabled !== 'function' || typeof pino.setBindings !== 'function') {
    return logger.child(bindings, options);
  }
  return new LazyRequestLogger(logger as PinoLike, bindings) as unknown as FastifyBaseLogger;
}
