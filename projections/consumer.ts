import type { Logger } from '../core/logger.js';
import type { Lsn } from '../core/units.js';
import type { Log, LogEntry } from '../log/index.js';

/**
 * A log consumer: a name, a durable offset (the last LSN whose effects are stored, written in the
 * same atomic batch as those effects) and an apply that is idempotent for records above it.
 */
export interface Consumer {
  readonly name: string;
  /** Last applied LSN (0: nothing applied). */
  readonly offset: Lsn;
  /** Applies records in LSN order, all above `offset`, and advances `offset` to the last one. */
  applyBatch(entries: readonly LogEntry[]): Promise<void>;
}

export interface ConsumerRunOptions {
  readonly batchBytesMax: number;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** Called after every applied batch with the new offset. */
  readonly onApplied: (offset: Lsn) => void;
}

/**
 * Drives a consumer: catch up from its offset, then follow the log's durable head. A bounded pull
 * loop (the RxJS tail only says "the head moved"), so a slow consumer never buffers. Resolves when
 * the signal aborts; rejects if an apply fails (a record in the log must never fail to apply, so
 * that is a bug or a storage failure, and retrying in a loop would hide it).
 */
export async function runConsumer(log: Log, consumer: Consumer, options: ConsumerRunOptions): Promise<void> {
  const { signal, logger } = options;
  while (!signal.aborted) {
    const from = (consumer.offset + 1) as Lsn;
    let applied = 0;
    for await (const batch of log.read(from, { batchBytesMax: options.batchBytesMax, signal })) {
      await consumer.applyBatch(batch);
      applied += batch.length;
      options.onApplied(consumer.offset);
      if (signal.aborted) return;
    }
    if (applied > 0) logger.debug({ consumer: consumer.name, applied, offset: consumer.offset }, 'consumer caught up');
    try {
      await log.waitForDurable((consumer.offset + 1) as Lsn, signal);
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
  }
}
