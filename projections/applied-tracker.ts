import { BehaviorSubject, filter, firstValueFrom, type Observable } from 'rxjs';
import { SvcError } from '../core/errors.js';
import type { Lsn } from '../core/units.js';

/**
 * The LSN a projection has applied, as a signal. Writers wait on it for read-your-writes; when
 * the projection fails, every waiter is rejected instead of hanging.
 */
export class AppliedTracker {
  private readonly subject: BehaviorSubject<Lsn>;
  private failure: SvcError | null = null;

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
    if (lsn > this.subject.value) this.subject.next(lsn);
  }

  fail(cause: unknown): void {
    if (this.failure) return;
    this.failure = new SvcError('STORAGE_UNAVAILABLE', 'a projection stopped applying the log; the server must be restarted', {}, cause);
    this.subject.error(this.failure);
  }

  /** Resolves once `lsn` is applied. */
  async waitFor(lsn: Lsn): Promise<void> {
    if (this.subject.value >= lsn) return;
    if (this.failure) throw this.failure;
    await firstValueFrom(this.subject.pipe(filter((applied) => applied >= lsn)));
  }
}
