import type { TableMark } from '../../core/change-feed.js';

/**
 * Live queries that are the same (same tenant schema, role, operation and variables) share one
 * evaluation, as Hasura multiplexes its live queries: a commit then costs one evaluation for
 * 1,000 identical subscriptions, not 1,000. A subscription joins an evaluation in flight only when
 * no commit has touched the tenant's tables since it started (the same mark), so the shared result
 * is as fresh as one of its own would be. An evaluation's signal aborts once every subscription
 * that joined it has ended; one that ends stops waiting at once, the others are not disturbed.
 */
export class SharedEvaluations<R> {
  private readonly inFlight = new Map<string, Shared<R>>();
  /**
   * The evaluation each subscription (its signal) last joined, so its end can release it. One
   * listener per subscription signal, whatever the number of evaluations it joins.
   */
  private readonly joined = new WeakMap<AbortSignal, Shared<R>>();

  /** Runs `evaluate` for `key`, or joins the one in flight for the same key and mark. */
  run(key: string, mark: TableMark, signal: AbortSignal, evaluate: (signal: AbortSignal) => Promise<R>): Promise<R> {
    if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('the subscription ended'));
    const found = this.inFlight.get(key);
    const shared = found !== undefined && found.mark === mark && !found.controller.signal.aborted ? found : this.start(key, mark, evaluate);
    this.attach(signal, shared);
    return shared.result(signal);
  }

  private start(key: string, mark: TableMark, evaluate: (signal: AbortSignal) => Promise<R>): Shared<R> {
    const shared = new Shared<R>(mark);
    this.inFlight.set(key, shared);
    void evaluate(shared.controller.signal)
      .then(
        (value) => shared.settle({ value }),
        (error: unknown) => shared.settle({ error }),
      )
      .finally(() => {
        if (this.inFlight.get(key) === shared) this.inFlight.delete(key);
      });
    return shared;
  }

  /** Counts the subscription in `shared`, releasing the evaluation it joined before. */
  private attach(signal: AbortSignal, shared: Shared<R>): void {
    const before = this.joined.get(signal);
    if (before === undefined) signal.addEventListener('abort', () => this.joined.get(signal)?.release(signal.reason), { once: true });
    else if (before !== shared) before.release(undefined);
    else return;
    this.joined.set(signal, shared);
    shared.participants++;
  }
}

type Outcome<R> = { readonly value: R } | { readonly error: unknown };

class Shared<R> {
  readonly controller = new AbortController();
  participants = 0;
  private outcome: Outcome<R> | null = null;
  private readonly waiting: ((outcome: Outcome<R>) => void)[] = [];

  constructor(readonly mark: TableMark) {}

  /** A subscription no longer needs this evaluation; the last one to go aborts it (`reason` set: it ended). */
  release(reason: unknown): void {
    this.participants--;
    if (this.participants === 0 && (reason !== undefined || this.outcome === null)) this.controller.abort(reason);
  }

  /** The outcome, or a rejection as soon as this subscription's own signal aborts. */
  result(signal: AbortSignal): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const stop = (): void => reject(signal.reason instanceof Error ? signal.reason : new Error('the subscription ended'));
      if (signal.aborted) return stop();
      const deliver = (outcome: Outcome<R>): void => {
        signal.removeEventListener('abort', stop);
        if ('value' in outcome) resolve(outcome.value);
        else reject(outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error)));
      };
      signal.addEventListener('abort', stop, { once: true });
      if (this.outcome !== null) deliver(this.outcome);
      else this.waiting.push(deliver);
    });
  }

  settle(outcome: Outcome<R>): void {
    this.outcome = outcome;
    for (const deliver of this.waiting.splice(0)) deliver(outcome);
  }
}
