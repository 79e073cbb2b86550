/**
 * The WebSocket of one connection behind a small interface (the `ws` library's types stay here),
 * with a bounded send: messages are queued by the socket while the client keeps up; once the
 * queue passes half the limit each send waits until it is written, and past the limit (or a
 * write stuck for a keep-alive interval) the client is too slow and the connection is closed,
 * rather than buffered without bound.
 */

/** What the transport uses of a `ws` WebSocket. */
export interface RawSocket {
  readonly protocol: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string, callback: (error?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  ping(): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => void): void;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): void;
  on(event: 'pong' | 'error', listener: (...args: unknown[]) => void): void;
}

const OPEN = 1;

/** How long a closed connection waits for the client's close frame before it is cut. */
const CLOSE_GRACE_MS = 2_000;

/** Close code of a client too slow to read what it asked for (policy violation). */
export const SLOW_CLIENT_CLOSE_CODE = 1008;

export class BoundedSocket {
  private closed = false;
  private pingTimer: NodeJS.Timeout | null = null;
  private awaitingPong = false;

  constructor(
    readonly raw: RawSocket,
    private readonly limits: { readonly sendBufferBytesMax: number; readonly keepAliveMs: number },
  ) {
    raw.on('close', () => {
      this.closed = true;
      if (this.pingTimer) clearInterval(this.pingTimer);
    });
    raw.on('pong', () => (this.awaitingPong = false));
    // A socket error is followed by 'close': that is where the connection ends.
    raw.on('error', () => undefined);
  }

  get protocol(): string {
    return this.raw.protocol;
  }

  get isOpen(): boolean {
    return !this.closed && this.raw.readyState === OPEN;
  }

  /** Pings every keep-alive interval; a client that did not answer the last ping is dropped. `onTick` runs each time too. */
  keepAlive(onTick?: () => void): void {
    if (this.limits.keepAliveMs <= 0 || this.pingTimer) return;
    this.pingTimer = setInterval(() => {
      if (!this.isOpen) return;
      if (this.awaitingPong) {
        this.raw.terminate();
        return;
      }
      this.awaitingPong = true;
      this.raw.ping();
      onTick?.();
    }, this.limits.keepAliveMs);
    this.pingTimer.unref();
  }

  /** Sends a text message; resolves at once while the client keeps up, else once it is written. */
  send(text: string): Promise<void> {
    if (!this.isOpen) return Promise.resolve();
    const queued = this.raw.bufferedAmount + Buffer.byteLength(text);
    if (queued > this.limits.sendBufferBytesMax) {
      this.close(SLOW_CLIENT_CLOSE_CODE, `client too slow: over ${this.limits.sendBufferBytesMax} bytes waiting to be sent`);
      return Promise.resolve();
    }
    const wait = queued > this.limits.sendBufferBytesMax / 2;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      this.raw.send(text, () => {
        if (timer) clearTimeout(timer);
        if (wait) resolve();
      });
      if (!wait) return resolve();
      // Written nothing for a whole keep-alive interval: the client stopped reading.
      timer = setTimeout(
        () => {
          this.close(SLOW_CLIENT_CLOSE_CODE, 'client too slow: a message waited a keep-alive interval to be written');
          resolve();
        },
        Math.max(1000, this.limits.keepAliveMs),
      );
      timer.unref();
    });
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.raw.close(code, reason);
    // A client that does not answer the close (it stopped reading) is cut off rather than awaited.
    const timer = setTimeout(() => this.raw.terminate(), CLOSE_GRACE_MS);
    timer.unref();
    this.raw.on('close', () => clearTimeout(timer));
  }
}
