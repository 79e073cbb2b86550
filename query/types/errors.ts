/**
 * The data errors of the type system, with PostgreSQL's message texts. PostgreSQL's SQLSTATE
 * classes map onto svcdb codes: 22xxx data exceptions (invalid text, out of range, value too
 * long, division by zero) and 42883 undefined function/operator are TYPE_MISMATCH
 * (docs/sql-types.md keeps the table). The PostgreSQL SQLSTATE goes into details.sqlstate.
 */
import { SvcError } from '../../core/errors.js';

/** 22P02: a string is not valid input for the type. */
export function invalidInput(typeName: string, text: string): SvcError {
  return new SvcError('TYPE_MISMATCH', `invalid input syntax for type ${typeName}: "${text}"`, { sqlstate: '22P02', type: typeName });
}

/** 22003: a value outside the type's range ('integer out of range', 'bigint out of range', ...). */
export function outOfRange(message: string, detail?: string): SvcError {
  return new SvcError('TYPE_MISMATCH', message, detail === undefined ? { sqlstate: '22003' } : { sqlstate: '22003', detail });
}

/** 22008: a date, timestamp or interval past the type's range ('timestamp out of range', 'interval out of range'). */
export function datetimeOutOfRange(message: string): SvcError {
  return new SvcError('TYPE_MISMATCH', message, { sqlstate: '22008' });
}

/** 22012. */
export function divisionByZero(): SvcError {
  return new SvcError('TYPE_MISMATCH', 'division by zero', { sqlstate: '22012' });
}

/** 22001: a string too long for VARCHAR(n)/CHAR(n) on assignment. */
export function valueTooLong(typeText: string): SvcError {
  return new SvcError('TYPE_MISMATCH', `value too long for type ${typeText}`, { sqlstate: '22001' });
}

/** Any other data exception (22023 invalid parameter value, 2201E invalid logarithm argument, ...). */
export function dataError(message: string, sqlstate = '22023', detail?: string): SvcError {
  return new SvcError('TYPE_MISMATCH', message, detail === undefined ? { sqlstate } : { sqlstate, detail });
}

/** 42804/42846: a cast or coercion PostgreSQL does not allow. */
export function cannotCast(from: string, to: string): SvcError {
  return new SvcError('TYPE_MISMATCH', `cannot cast type ${from} to ${to}`, { sqlstate: '42846' });
}

/** 0A000: a feature svcdb does not implement (PostgreSQL would accept it). */
export function notSupported(message: string): SvcError {
  return new SvcError('INVALID_QUERY', message, { sqlstate: '0A000' });
}
