import type { ResultSummary } from '../../../query/index.js';

/** The wire shape of a result's metadata (POST /query with include_metadata, a statement of a transaction, a completed async query). */
export interface ResultMetadataView {
  readonly columns: ResultSummary['columns'];
  readonly row_count: number;
  readonly execution_time_ms: number;
  readonly query_id: string;
  readonly command: string;
  readonly affected_rows: number | null;
  readonly truncated: boolean;
}

/** The one place a result's metadata is built: every route that shows one uses it. */
export function resultMetadataView(result: ResultSummary, run: { readonly elapsedMs: number; readonly queryId: string }): ResultMetadataView {
  return {
    columns: result.columns,
    row_count: result.rowCount,
    execution_time_ms: Math.round(run.elapsedMs),
    query_id: run.queryId,
    command: result.command,
    affected_rows: result.affectedRows,
    truncated: result.truncated,
  };
}
