/**
 * The circuit breaker of one webhook endpoint: an explicit state machine, time passed in.
 *
 *   closed ──failure_threshold consecutive failures──► open
 *   open ──timeout_secs passed (seen by the next call)──► half_open
 *   half_open ──success_threshold successes──► closed
 *   half_open ──any failure──► open (opened_at restarts the timer)
 *
 * Closed lets every call through and a success resets the failure count. Open refuses at once
 * (the dispatcher keeps the event and asks again at `nextTrialAtMs`). Half-open lets at most
 * half_open_max_calls trial calls be in flight at once.
 *
 * A call is a permit: `tryAcquire` hands one out (or null), and each permit is settled exactly
 * once by `onSuccess`, `onFailure` or `release` (no attempt was made: the ledger already had it,
 * the transform failed). A permit remembers the epoch (one per state entered) it was granted in;
 * the result of a permit from an earlier epoch changes nothing, so calls started while closed
 * and answered after the breaker opened cannot close or reopen it.
 */
import { assert } from '../../core/errors.js';
import type { WebhookCircuitBreaker } from '../../core/webhook.js';
import { MS_PER_SEC, WEBHOOK_LIMITS, checkBounded } from './limits.js';

export type BreakerState = 'closed' | 'open' | 'half_open';

/** The value of the `svc_circuit_breaker_state` gauge. */
export const BREAKER_GAUGE: Readonly<Record<BreakerState, number>> = Object.freeze({ closed: 0, half_open: 1, open: 2 });

/** What GET /api/v1/webhooks/{id} shows of the breaker. */
export interface BreakerStatus {
  readonly state: BreakerState;
  /** Consecutive failures: counting while closed, the count that opened it while open. */
  readonly failure_count: number;
  /** When it last opened (ISO 8601), null unless open or half-open. */
  readonly opened_at: string | null;
  readonly gauge: number;
}

/** A granted call; settle it exactly once. */
export interface BreakerPermit {
  readonly epoch: number;
  /** Granted in half-open (a trial call). */
  readonly trial: boolean;
  settled: boolean;
}

type BreakerEvent = 'tick' | 'success' | 'failure';

/** Refuses (VALIDATION_ERROR) a circuit_breaker setting out of bounds (registration calls this). */
export function checkBreakerConfig(config: WebhookCircuitBreaker): void {
  const n = WEBHOOK_LIMITS.breakerCountMax;
  checkBounded('circuit_breaker.failure_threshold', config.failure_threshold, 1, n, true);
  checkBounded('circuit_breaker.success_threshold', config.success_threshold, 1, n, true);
  checkBounded('circuit_breaker.half_open_max_calls', config.half_open_max_calls, 1, n, true);
  checkBounded('circuit_breaker.timeout_secs', config.timeout_secs, 0.001, WEBHOOK_LIMITS.breakerOpenSecsMax, false);
}

export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private epoch = 0;
  private failures = 0;
  private successes = 0;
  private trialsInFlight = 0;
  private openedAtMs: number | null = null;
  private readonly openMs: number;

  constructor(private readonly config: WebhookCircuitBreaker) {
    checkBreakerConfig(config);
    this.openMs = config.timeout_secs * MS_PER_SEC;
  }

  /** A permit for one call, or null when open (or half-open with every trial slot taken). */
  tryAcquire(nowMs: number): BreakerPermit | null {
    this.step('tick', nowMs);
    if (this.state === 'open') return null;
    if (this.state === 'half_open') {
      if (this.trialsInFlight >= this.config.half_open_max_calls) return null;
      this.trialsInFlight++;
      return { epoch: this.epoch, trial: true, settled: false };
    }
    return { epoch: this.epoch, trial: false, settled: false };
  }

  /** The call got its success (a 2xx). */
  onSuccess(permit: BreakerPermit, nowMs: number): void {
    if (this.settle(permit)) this.step('success', nowMs);
  }

  /** The call failed (a status other than 2xx and 410, a network error, a timeout). */
  onFailure(permit: BreakerPermit, nowMs: number): void {
    if (this.settle(permit)) this.step('failure', nowMs);
  }

  /** The permit was not used for a call: it frees its trial slot and counts for nothing. */
  release(permit: BreakerPermit): void {
    this.settle(permit);
  }

  /** The state as of `nowMs` (an open breaker whose time is up shows half-open). */
  status(nowMs: number): BreakerStatus {
    this.step('tick', nowMs);
    return {
      state: this.state,
      failure_count: this.failures,
      opened_at: this.openedAtMs === null ? null : new Date(this.openedAtMs).toISOString(),
      gauge: BREAKER_GAUGE[this.state],
    };
  }

  /** While open: the time from which a trial call is let through; otherwise null. */
  nextTrialAtMs(): number | null {
    return this.state === 'open' && this.openedAtMs !== null ? this.openedAtMs + this.openMs : null;
  }

  /** Marks the permit settled; true when its result belongs to the current epoch. */
  private settle(permit: BreakerPermit): boolean {
    assert(!permit.settled, 'a circuit breaker permit is settled once');
    permit.settled = true;
    if (permit.epoch !== this.epoch) return false;
    if (permit.trial) this.trialsInFlight--;
    return true;
  }

  /** Every transition of the machine. */
  private step(event: BreakerEvent, nowMs: number): void {
    assert(Number.isFinite(nowMs), 'the circuit breaker needs a finite time');
    switch (this.state) {
      case 'closed':
        if (event === 'success') this.failures = 0;
        if (event === 'failure' && ++this.failures >= this.config.failure_threshold) this.enter('open', nowMs);
        return;
      case 'open':
        if (event === 'tick' && nowMs - this.openedAtMs! >= this.openMs) this.enter('half_open', nowMs);
        return;
      case 'half_open':
        if (event === 'success' && ++this.successes >= this.config.success_threshold) this.enter('closed', nowMs);
        if (event === 'failure') {
          this.failures++;
          this.enter('open', nowMs);
        }
        return;
    }
  }

  private enter(state: BreakerState, nowMs: number): void {
    this.state = state;
    this.epoch++;
    this.successes = 0;
    this.trialsInFlight = 0;
    if (state === 'open') this.openedAtMs = nowMs;
    if (state === 'closed') {
      this.failures = 0;
      this.openedAtMs = null;
    }
  }
}
