import { BehaviorSubject, type Observable } from 'rxjs';
import { SvcError } from '../core/errors.js';
import type { Lsn } from '../core/units.js';

/**
 * The LSN a projection has applied, as a signal. Writers wait on it for read-your-writes; when
 * the projection fails, every waiter is rejected instead of hanging.
 */
export class AppliedTracker {
  private readonly subject: BehaviorSubject<Lsn>;
  private failure: SvcError | null = null;
  /**
   * Writers waiting for an LSN, lowest first. A plain list rather than a subscription per waiter:
   * every durable write waits here once, and an advance wakes only the waiters it reached.
   */
  private readonly waiters: { lsn: Lsn; resolve: () => void; reject: (error: unknown) => void }[] = [];

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
    return new Promise<void>((resolve, reject) => {
      // Writers wait in append order: the new LSN is nearly always the highest.
      let at = this.waiters.length;
      while (at > 0 && this.waiters[at - 1]!.lsn > lsn) at -= 1;
      this.waiters.splice(at, 0, { lsn, resolve, reject });
    });
  }
}
