import { assert } from '../core/errors.js';
import type { JsonRow, QueryResult, ResultColumn } from './result.js';

/** What a result says besides its rows. */
export type ResultSummary = Omit<QueryResult, 'rows'>;

/**
 * A result whose rows are pulled in batches (SqlEngine.stream), as kysely's `stream()` hands them
 * out: iterate it once with `for await`; leaving the loop stops the query (its snapshot and scans
 * close). `command` and `columns` are known before the first row, `summary()` once the loop ended.
 */
export interface RowStream extends AsyncIterable<JsonRow[]> {
  readonly command: string;
  readonly columns: readonly ResultColumn[];
  /** rowCount: rows handed out; truncated: rows were left when the consumer stopped (or the statement cut them). */
  summary(): ResultSummary;
}

/** A batch of a source, and whether it is the source's last one (nothing is left after it). */
export interface SourceBatch {
  readonly rows: JsonRow[];
  readonly last: boolean;
}

/** What a RowStream is made of: its metadata and the generator that pulls its batches. */
export interface RowStreamSource {
  readonly command: string;
  readonly columns: readonly ResultColumn[];
  readonly affectedRows: number | null;
  /** The statement itself already cut its rows (execute()'s maxRows). */
  readonly cut: boolean;
  batches(): AsyncGenerator<SourceBatch>;
}

/** The one RowStream: counts what it hands out and notices a consumer that stopped before the end. */
class PulledRows implements RowStream {
  readonly command: string;
  readonly columns: readonly ResultColumn[];
  private rowCount = 0;
  private left = false;
  private iterated = false;

  constructor(private readonly source: RowStreamSource) {
    this.command = source.command;
    this.columns = source.columns;
  }

  // A plain iterator over the source's generator rather than another generator: a result of one
  // row (a point SELECT) goes through this per request, and each generator layer costs promises.
  [Symbol.asyncIterator](): AsyncIterator<JsonRow[]> {
    assert(!this.iterated, 'a RowStream is iterated once');
    this.iterated = true;
    const batches = this.source.batches();
    return {
      next: async () => {
        const step = await batches.next();
        if (step.done) {
          this.left = false;
          return { done: true, value: undefined };
        }
        this.rowCount += step.value.rows.length;
        // Stays true when the consumer leaves after this batch: rows were left unread.
        this.left = !step.value.last;
        return { done: false, value: step.value.rows };
      },
      // Leaving the loop (break, return, throw) ends the source: its plan stops and its snapshot closes.
      return: async () => {
        await batches.return(undefined);
        return { done: true, value: undefined };
      },
    };
  }

  summary(): ResultSummary {
    const { command, columns, affectedRows, cut } = this.source;
    return { command, columns: [...columns], rowCount: this.rowCount, affectedRows, truncated: cut || this.left };
  }
}

/** A RowStream over a generator of batches (the engine's SELECT source, or rows already in memory). */
export function rowStream(source: RowStreamSource): RowStream {
  return new PulledRows(source);
}

/** Hands out rows already in memory (the result of a statement that is not one SELECT), `batchRows` at a time. */
export function sliceStream(result: QueryResult, batchRows: number): RowStream {
  assert(Number.isInteger(batchRows) && batchRows >= 1, 'batchRows is a positive integer');
  const { rows } = result;
  return rowStream({
    command: result.command,
    columns: result.columns,
    affectedRows: result.affectedRows,
    cut: result.truncated,
    async *batches() {
      for (let at = 0; at < rows.length; at += batchRows) yield { rows: rows.slice(at, at + batchRows), last: at + batchRows >= rows.length };
    },
  });
}

/**
 * Reads a stream into `into` (so a caller may watch it fill), keeping at most `rowsMax` rows; it
 * stops pulling at the first row past them and says the result was truncated.
 */
export async function collectRows(stream: RowStream, rowsMax: number, into?: JsonRow[]): Promise<QueryResult> {
  let rows = into ?? null;
  let cut = false;
  for await (const batch of stream) {
    if (rows === null) {
      // Nobody watches: the first batch (execute() asks for one of rowsMax) is the result as it is.
      rows = batch.length <= rowsMax ? batch : batch.slice(0, rowsMax);
      cut = batch.length > rowsMax;
    } else {
      const room = rowsMax - rows.length;
      const kept = Math.min(room, batch.length);
      for (let i = 0; i < kept; i++) rows.push(batch[i]!);
      cut = batch.length > room;
    }
    // Full: a row past rowsMax is in this batch (cut), or the stream says whether any follows.
    if (rows.length >= rowsMax) break;
  }
  const summary = stream.summary();
  const result = rows ?? [];
  return { ...summary, rows: result, rowCount: result.length, truncated: summary.truncated || cut };
}
