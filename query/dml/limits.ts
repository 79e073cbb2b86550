import { SvcError } from '../../core/errors.js';

export function limitExceededRows(max: number): SvcError {
  return new SvcError('LIMIT_EXCEEDED', `one statement may change at most ${max} rows (one log record); split the statement`, { rows_max: max });
}
