import { BehaviorSubject, type Observable } from 'rxjs';
import { SvcError } from '../core/errors.js';
import type { Lsn } from '../core/units.js';

/** Longest delay setTimeout takes (a larger one fires at once). */
const TIMER_MS_MAX = 2 ** 31 - 1;

interface Waiter {
  readonly lsn: Lsn;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The LSN a projection has applied, as a signal. Catalog writers, transactions opening a snapshot
 * and reads behind the read barrier wait on it; when the projection fails, every waiter is rejected
 * instead of hanging.
 */
export class AppliedTracker {
  private readonly subject: BehaviorSubject<Lsn>;
  private failure: SvcError | null = null;
  /**
   * Waiters for an LSN, lowest first. A plain list rather than a subscription per waiter: an
   * advance wakes only the waiters it reached.
   */
  private readonly waiters: Waiter[] = [];

  constructor(initial: Lsn) {
    this.subject = new BehaviorSubject(initial);
  }

  get lsn(): Lsn {
    return this.subject.value;
  }

  /** The applied LSN as it moves (errors when the projection fails). */
  get lsn$(): Observable<Lsn> {
    return this.subject.asObservable();
  }

  /** How many waits are pending (a wait that gave up is not counted: waitWithin drops it). */
  get waiting(): number {
    return this.waiters.length;
  }

  get failed(): SvcError | null {
    return this.failure;
  }

  advance(lsn: Lsn): void {
    if (lsn <= this.subject.value) return;
    this.subject.next(lsn);
    let due = 0;
    while (due < this.waiters.length && this.waiters[due]!.lsn <= lsn) due += 1;
    if (due > 0) for (const waiter of this.waiters.splice(0, due)) waiter.resolve();
  }

  fail(cause: unknown): void {
    if (this.failure) return;
    this.failure = new SvcError('STORAGE_UNAVAILABLE', 'a projection stopped applying the log; the server must be restarted', {}, cause);
    this.subject.error(this.failure);
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.failure);
  }

  /** Resolves once `lsn` is applied. */
  waitFor(lsn: Lsn): Promise<void> {
    // After a failure the subject's value throws: check the failure first.
    if (this.failure) return Promise.reject(this.failure);
    if (this.subject.value >= lsn) return Promise.resolve();
    return new Promise<void>((resolve, reject) => this.insert({ lsn, resolve, reject }));
  }

  /**
   * waitFor with a way out, for a statement that may not wait longer than it may run: resolves true
   * once `lsn` is applied, false once `deadlineMs` (a Date.now() value) has passed or `signal`
   * aborted, whichever comes first. A wait that gives up leaves nothing behind: its waiter leaves
   * the list, its timer and abort listener go (a read cancelled while an apply takes seconds, again
   * and again, would otherwise pile up waiters until that apply ends). Rejects as waitFor does when
   * the projection fails.
   */
  waitWithin(lsn: Lsn, deadlineMs: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.subject.value >= lsn) return Promise.resolve(true);
    if (signal?.aborted || Date.now() > deadlineMs) return Promise.resolve(false);
    return new Promise<boolean>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const settle = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', giveUp);
      };
      const waiter: Waiter = {
        lsn,
        resolve: () => {
          settle();
          resolve(true);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      const giveUp = (): void => {
        settle();
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        resolve(false);
      };
      this.insert(waiter);
      const leftMs = deadlineMs - Date.now();
      // One ms past the deadline: a timer may fire a little early, and the caller checks `> deadlineMs`.
      if (leftMs < TIMER_MS_MAX) timer = setTimeout(giveUp, Math.max(0, leftMs) + 1);
      signal?.addEventListener('abort', giveUp, { once: true });
    });
  }

  private insert(waiter: Waiter): void {
    // Waits come in append order: the new LSN is nearly always the highest.
    let at = this.waiters.length;
    while (at > 0 && this.waiters[at - 1]!.lsn > waiter.lsn) at -= 1;
    this.waiters.splice(at, 0, waiter);
  }
}
