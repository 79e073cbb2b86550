/**
 * The async query state machine: its states, its events and the one function that moves between
 * them. Everything else (the registry, the routes) asks nextStatus() and never assigns a status itself.
 */
export const ASYNC_QUERY_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type AsyncQueryStatus = (typeof ASYNC_QUERY_STATUSES)[number];

/** start: a worker slot took it; complete/fail: the engine finished; cancel: DELETE /query/{id}. */
export type AsyncQueryEvent = 'start' | 'complete' | 'fail' | 'cancel';

const TRANSITIONS: Readonly<Record<AsyncQueryStatus, Partial<Record<AsyncQueryEvent, AsyncQueryStatus>>>> = {
  pending: { start: 'running', cancel: 'cancelled' },
  running: { complete: 'completed', fail: 'failed', cancel: 'cancelled' },
  completed: {},
  failed: {},
  cancelled: {},
};

/** The state `event` moves `status` to, or null when the event does not apply in that state. */
export function nextStatus(status: AsyncQueryStatus, event: AsyncQueryEvent): AsyncQueryStatus | null {
  return TRANSITIONS[status][event] ?? null;
}

/** A finished query is kept for its result, and can no longer change. */
export function isFinished(status: AsyncQueryStatus): boolean {
  return Object.keys(TRANSITIONS[status]).length === 0;
}
