/** Limits and fixed names of the collection interface (docs/collections.md). */

/** Resources a list returns when the request names no limit (the spec's GET rows default). */
export const LIST_LIMIT_DEFAULT = 100;
/** Most resources one list returns (the spec's GET rows maximum). */
export const LIST_LIMIT_MAX = 10_000;
/** Largest offset a list accepts (PostgreSQL's OFFSET is a bigint; a 32-bit one is plenty to page with). */
export const LIST_OFFSET_MAX = 2_147_483_647;

/**
 * A collection name: a plain SQL identifier of at most 63 characters (PostgreSQL's NAMEDATALEN),
 * so the table it names can be written unquoted in SQL as well.
 */
export const COLLECTION_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';

/** Longest id path parameter (a UUID is 36 characters; other id types get some room). */
export const ID_PARAM_LENGTH_MAX = 200;

/** The columns of a collection's table with a meaning of their own. */
export const ID_COLUMN = 'id';
export const NAME_COLUMN = 'name';
export const CREATED_AT_COLUMN = 'created_at';
export const UPDATED_AT_COLUMN = 'updated_at';
/** The JSONB column holding the fields of a resource that have no column of their own. */
export const EXTRA_COLUMN = 'extra';
