import { BehaviorSubject, type Observable } from 'rxjs';
import type { Lsn } from '../core/units.js';

interface Waiter {
  readonly lsn: Lsn;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

/**
 * The durable head: a BehaviorSubject for "the head moved" signals, and a list of waiters kept in
 * LSN order so each advance settles only the waiters it reaches.
 */
export class DurableHead {
  private readonly subject: BehaviorSubject<Lsn>;
  readonly changes$: Observable<Lsn>;
  private waiters: Waiter[] = [];
  /**
   * The waiters of each signal, watched by one abort listener per signal for as long as the signal
   * lives, not one added and removed per wait: a log consumer waits once per group commit, and
   * EventTarget's addEventListener + removeEventListener were ~1% of a single-row insert's main thread.
   */
  private readonly bySignal = new WeakMap<AbortSignal, Set<Waiter>>();
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
      this.unwatch(waiter);
      waiter.resolve();
    }
  }

  wait(target: Lsn, signal?: AbortSignal): Promise<void> {
    if (target <= this.subject.value) return Promise.resolve();
    if (this.ended !== null) return Promise.reject(this.ended.error);
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { lsn: target, resolve, reject, signal };
      if (signal !== undefined) this.watched(signal).add(waiter);
      // Waiters arrive in nearly increasing LSN order: search from the end.
      let at = this.waiters.length;
      while (at > 0 && (this.waiters[at - 1] as Waiter).lsn > target) at--;
      this.waiters.splice(at, 0, waiter);
    });
  }

  /** The set of `signal`'s waiters, with its one abort listener (added at the signal's first wait). */
  private watched(signal: AbortSignal): Set<Waiter> {
    const known = this.bySignal.get(signal);
    if (known !== undefined) return known;
    const waiting = new Set<Waiter>();
    this.bySignal.set(signal, waiting);
    const onAbort = (): void => {
      this.waiters = this.waiters.filter((w) => !waiting.has(w));
      for (const waiter of waiting) waiter.reject(signal.reason);
      waiting.clear();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    return waiting;
  }

  private unwatch(waiter: Waiter): void {
    if (waiter.signal !== undefined) this.bySignal.get(waiter.signal)?.delete(waiter);
  }

  /** No further advance will come (close or write failure): fail every waiter past the head. */
  end(error: unknown, complete: boolean): void {
    this.ended = { error };
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      this.unwatch(waiter);
      waiter.reject(error);
    }
    // The subject is completed, never errored: an RxJS subscriber without an error handler would
    // turn the error into an uncaught exception.
    if (complete) this.subject.complete();
  }
}
