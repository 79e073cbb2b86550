import type { JsonDocument } from './json-exact.js';

/**
 * SQL types and their run-time values. One representation per type, used by every layer:
 *
 * | SQL type                         | run-time value                                             |
 * |----------------------------------|------------------------------------------------------------|
 * | BOOLEAN                          | boolean                                                    |
 * | SMALLINT, INTEGER                | number (an integer)                                        |
 * | BIGINT                           | bigint                                                     |
 * | REAL, DOUBLE PRECISION           | number                                                     |
 * | NUMERIC(p,s)                     | string: canonical decimal text as PostgreSQL prints it     |
 * | TEXT, VARCHAR(n), CHAR(n), UUID  | string (UUID lower-case canonical)                         |
 * | JSONB                            | JsonValue (the parsed document, numbers exact)             |
 * | TIMESTAMP [WITH TIME ZONE]       | bigint: microseconds since 1970-01-01T00:00:00Z            |
 * | DATE                             | number: days since 1970-01-01                              |
 * | VECTOR(n)                        | Float32Array of length n                                   |
 * | T[] (ARRAY of any type above)    | JS array of element values (nested for more dimensions)    |
 *
 * NULL is `null` for every type. Values never carry their type: the catalog or the binder knows it.
 */
export type SqlTypeName =
  | 'bool'
  | 'int2'
  | 'int4'
  | 'int8'
  | 'numeric'
  | 'float4'
  | 'float8'
  | 'text'
  | 'varchar'
  | 'char'
  | 'uuid'
  | 'jsonb'
  | 'timestamp'
  | 'timestamptz'
  | 'date'
  | 'vector'
  | 'array';

export interface SqlType {
  readonly name: SqlTypeName;
  /** VARCHAR(n), CHAR(n): the length limit in characters. */
  readonly length?: number;
  /** NUMERIC(p,s). */
  readonly precision?: number;
  readonly scale?: number;
  /** VECTOR(n). */
  readonly dimension?: number;
  /** Arrays: the element type (never itself an array: int[][] is int[], as in PostgreSQL). */
  readonly element?: SqlType;
}

/** A JSON document: numbers a double cannot hold exactly are JsonNumber, a top-level JSON null is JSON_NULL (core/json-exact.ts). */
export type JsonValue = JsonDocument;

export type SqlValue = null | boolean | number | bigint | string | Float32Array | JsonValue | readonly SqlValue[];

/** The SQL text of a type as GET /tables/{name} shows it (BIGINT, VARCHAR(255), VECTOR(3), ...). */
export function sqlTypeText(type: SqlType): string {
  switch (type.name) {
    case 'bool':
      return 'BOOLEAN';
    case 'int2':
      return 'SMALLINT';
    case 'int4':
      return 'INTEGER';
    case 'int8':
      return 'BIGINT';
    case 'float4':
      return 'REAL';
    case 'float8':
      return 'DOUBLE PRECISION';
    case 'numeric':
      if (type.precision === undefined) return 'NUMERIC';
      return `NUMERIC(${type.precision},${type.scale ?? 0})`;
    case 'text':
      return 'TEXT';
    case 'varchar':
      return type.length === undefined ? 'VARCHAR' : `VARCHAR(${type.length})`;
    case 'char':
      return `CHAR(${type.length ?? 1})`;
    case 'uuid':
      return 'UUID';
    case 'jsonb':
      return 'JSONB';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'timestamptz':
      return 'TIMESTAMP WITH TIME ZONE';
    case 'date':
      return 'DATE';
    case 'vector':
      return `VECTOR(${type.dimension ?? 0})`;
    case 'array':
      return `${sqlTypeText(type.element ?? { name: 'text' })}[]`;
  }
}
