import { SvcError } from '../core/errors.js';
import type { Lsn } from '../core/units.js';

/** What an operator can do about a damaged log; every LOG_CORRUPT message ends with it. */
export const LOG_CORRUPT_ADVICE =
  'restore the data directory from a backup, or run `svcdb repair --data DIR`, which truncates the log ' + 'at the damage and loses every record after it';

/** LOG_CORRUPT naming the segment file and byte offset of the damage. */
export function logCorrupt(segmentFile: string, positionBytes: number, what: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('LOG_CORRUPT', `log segment ${segmentFile} is damaged at byte offset ${positionBytes}: ${what}; ${LOG_CORRUPT_ADVICE}`, {
    segment: segmentFile,
    positionBytes,
    ...details,
  });
}

/** A read below the first LSN the log still holds (retention deleted it). */
export function belowFirstLsn(requested: Lsn, firstLsn: Lsn): SvcError {
  return new SvcError(
    'NOT_FOUND',
    `log record ${requested} is no longer held: retention removed the segments below LSN ${firstLsn}; ` +
      'rebuild the consumer from a checkpoint at or after that LSN',
    { lsn: requested, firstLsn },
  );
}
