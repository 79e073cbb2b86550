import { BehaviorSubject, type Observable } from 'rxjs';
import type { Lsn } from '../core/units.js';

interface Waiter {
  readonly lsn: Lsn;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: () => void;
}

/**
 * The durable head: a BehaviorSubject for "the head moved" signals, and a list of waiters kept in
 * LSN order so each advance settles only the waiters it reaches.
 */
export class DurableHead {
  private readonly subject: BehaviorSubject<Lsn>;
  readonly changes$: Observable<Lsn>;
  private waiters: Waiter[] = [];
  /** Once set, nothing will become durable any more: new waits past the head fail with it. */
  private ended: { error: unknown } | null = null;

  constructor(initial: Lsn) {
    this.subject = new BehaviorSubject(initial);
    this.changes$ = this.subject.asObservable();
  }

  get value(): Lsn {
    return this.subject.value;
  }

  advance(to: Lsn): void {
    if (to <= this.subject.value) return;
    this.subject.next(to);
    let settled = 0;
    while (settled < this.waiters.length && (this.waiters[settled] as Waiter).lsn <= to) settled++;
    if (settled === 0) return;
    const ready = this.waiters.slice(0, settled);
    this.waiters = this.waiters.slice(settled);
    for (const waiter of ready) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.resolve();
    }
  }

  wait(target: Lsn, signal?: AbortSignal): Promise<void> {
    if (target <= this.subject.value) return Promise.resolve();
    if (this.ended !== null) return Promise.reject(this.ended.error);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = { lsn: target, resolve, reject, signal, onAbort };
      signal?.addEventListener('abort', onAbort, { once: true });
      // Waiters arrive in nearly increasing LSN order: search from the end.
      let at = this.waiters.length;
      while (at > 0 && (this.waiters[at - 1] as Waiter).lsn > target) at--;
      this.waiters.splice(at, 0, waiter);
    });
  }

  /** No further advance will come (close or write failure): fail every waiter past the head. */
  end(error: unknown, complete: boolean): void {
    this.ended = { error };
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.reject(error);
    }
    // The subject is completed, never errored: an RxJS subscriber without an error handler would
    // turn the error into an uncaught exception.
    if (complete) this.subject.complete();
  }
}
