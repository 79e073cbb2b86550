/**
 * Waits that end early: after `ms`, when woken (a stop, a new definition), or when a signal
 * aborts. Every waiter is removed when it ends, so nothing piles up over a long run.
 */
export class Sleeper {
  private readonly wakers = new Set<() => void>();
  private closed = false;

  /** Waits `ms` (null: until woken); resolves at once after close() or with an aborted signal. */
  sleep(ms: number | null, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.closed || signal?.aborted) return resolve();
      const done = (): void => {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wakers.delete(done);
        resolve();
      };
      const timer = ms === null ? null : setTimeout(done, ms);
      this.wakers.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Ends every wait now. */
  wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }

  /** Ends every wait, and every later one at once. */
  close(): void {
    this.closed = true;
    this.wakeAll();
  }
}
