/**
 * The lifecycle of a CDC stream, as an explicit state machine (docs/cdc.md):
 *
 *   starting ──opened──► running ──error──► failing ──(backoff)──► starting
 *      │                    │  ▲                │
 *      └───────pause────────┴──┼──────pause─────┴──► paused ──resume──► starting
 *                              └── (snapshotting while SNAPSHOT events go out)
 *   any ──stop──► stopped (server shutdown or DROP)
 */
export type StreamState = 'starting' | 'snapshotting' | 'running' | 'failing' | 'paused' | 'stopped';

export type StreamEvent = 'opened' | 'snapshot' | 'caught_snapshot' | 'error' | 'retry' | 'pause' | 'resume' | 'stop';

const TRANSITIONS: Record<StreamState, Partial<Record<StreamEvent, StreamState>>> = {
  starting: { opened: 'running', snapshot: 'snapshotting', error: 'failing', pause: 'paused', stop: 'stopped' },
  snapshotting: { caught_snapshot: 'running', error: 'failing', pause: 'paused', stop: 'stopped' },
  running: { snapshot: 'snapshotting', error: 'failing', pause: 'paused', stop: 'stopped', opened: 'running' },
  failing: { retry: 'starting', pause: 'paused', stop: 'stopped', error: 'failing' },
  paused: { resume: 'starting', stop: 'stopped', pause: 'paused' },
  stopped: { stop: 'stopped' },
};

/** The next state, or the same when the event does not apply in this state. */
export function transition(state: StreamState, event: StreamEvent): StreamState {
  return TRANSITIONS[state][event] ?? state;
}

/** Capped exponential backoff of retries after delivery errors: 100 ms, 200 ms, ... up to the cap. */
export function retryDelayMs(failures: number, capMs: number): number {
  return Math.min(capMs, 100 * 2 ** Math.max(0, Math.min(failures - 1, 20)));
}
