import { resultMetadataView } from '../query/result-view.js';
import type { AsyncQueryInfo, AsyncQuerySubmitted } from './async-record.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * An async query record as GET /query/{id} shows it and its callback carries it: the fields of
 * its state, and when completed its data and metadata in POST /query's shape.
 */
export function asyncQueryView(info: AsyncQueryInfo, statusUrl: string): Record<string, unknown> {
  const out: Record<string, unknown> = { query_id: info.queryId, status: info.status, status_url: statusUrl, created_at: iso(info.createdAtMs) };
  if (info.startedAtMs !== null) out.started_at = iso(info.startedAtMs);
  if (info.status === 'running') out.progress = info.rowsCollected;
  const finishedAt = info.finishedAtMs === null ? undefined : iso(info.finishedAtMs);
  if (info.status === 'completed' && info.outcome) {
    const { result, elapsedMs } = info.outcome;
    Object.assign(out, { completed_at: finishedAt, data: result.rows, metadata: resultMetadataView(result, { elapsedMs, queryId: info.queryId }) });
  }
  if (info.status === 'failed') Object.assign(out, { failed_at: finishedAt, error: info.error });
  if (info.status === 'cancelled') out.cancelled_at = finishedAt;
  return out;
}

/** POST /query/async's 202 answer. */
export function submittedView(submitted: AsyncQuerySubmitted, statusUrl: string): Record<string, unknown> {
  return { query_id: submitted.queryId, status: submitted.status, status_url: statusUrl, estimated_time_ms: Math.round(submitted.estimatedTimeMs) };
}

/** DELETE /query/{id}'s answer. */
export function cancelledView(info: AsyncQueryInfo): Record<string, unknown> {
  return { query_id: info.queryId, status: info.status, cancelled_at: info.finishedAtMs === null ? undefined : iso(info.finishedAtMs) };
}
