/**
 * Resource limits of the type system and function library (one place, units in the names).
 * PostgreSQL's own value limits (numeric digits, date ranges) live with their types.
 */

/** Compiled LIKE/regex patterns kept; the oldest is dropped beyond this. */
export const PATTERN_CACHE_ENTRIES_MAX = 1000;
/** Time zone formatters kept (IANA names seen in timestamp input). */
export const ZONE_CACHE_ENTRIES_MAX = 500;
/**
 * The longest string repeat/lpad/rpad may build, in UTF-16 code units. PostgreSQL allows 1 GB;
 * svcdb refuses earlier so that one expression cannot exhaust the heap.
 */
export const TEXT_RESULT_CHARS_MAX = 10_000_000;
