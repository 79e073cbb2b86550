/**
 * CONTRACT between the SQL engine core (parse/bind/plan/exec) and the type system + function
 * library. query/types/index.ts and query/functions/index.ts export these names; the engine
 * core uses nothing else from them. (Written first so both sides could be built in parallel.)
 *
 * Run-time values are core/values.ts's SqlValue, plus two query-only kinds:
 *   INTERVAL -> Interval { months: number; days: number; micros: bigint } (PostgreSQL's three fields)
 *   arrays   -> JS arrays of element values (int4[] is number[], text[] is string[]; NULL elements are null)
 * A value never carries its type: the binder knows every expression's QType.
 */
import type { SqlTypeName, SqlValue } from '../../core/values.js';

export type QTypeName = SqlTypeName | 'interval' | 'array' | 'unknown';

/** The type of an expression. 'unknown' is an untyped string literal or parameter not yet resolved. */
export interface QType {
  readonly name: QTypeName;
  /** arrays: the element type. */
  readonly element?: QType;
  readonly length?: number;
  readonly precision?: number;
  readonly scale?: number;
  readonly dimension?: number;
}

export interface Interval {
  readonly months: number;
  readonly days: number;
  readonly micros: bigint;
}

export type QValue = SqlValue | Interval | readonly QValue[];

/** A resolved scalar function or operator: the binder casts each argument to argTypes[i]. */
export interface ResolvedFunction {
  readonly name: string;
  readonly argTypes: readonly QType[];
  readonly returnType: QType;
  /** true: returns NULL when any argument is NULL, without calling impl (most functions). */
  readonly strict: boolean;
  /** false for now(), random(), gen_random_uuid(): never constant-folded, evaluated per row. */
  readonly immutable: boolean;
  readonly impl: (args: readonly QValue[]) => QValue;
}

export interface AggregateState {
  /** Adds one row's (already cast) argument values. */
  step(args: readonly QValue[]): void;
  result(): QValue;
}

export interface ResolvedAggregate {
  readonly name: string;
  readonly argTypes: readonly QType[];
  readonly returnType: QType;
  /** count(*) has no arguments; strict aggregates skip rows where any argument is NULL. */
  readonly strict: boolean;
  newState(): AggregateState;
}

export type CastFn = (value: QValue) => QValue;

/** The functions the engine core calls. All throw SvcError (TYPE_MISMATCH, INVALID_QUERY, ...) on bad input. */
export interface TypeSystem {
  /** Scalar function or operator by lower-case name ('upper', '+', '||', '->>', '@>', '~~' for LIKE...). null: none fits. */
  resolveFunction(name: string, argTypes: readonly QType[]): ResolvedFunction | null;
  /** After resolveFunction gave null: true when several fit and none is best ("is not unique"), false when none fits. */
  functionIsAmbiguous(name: string, argTypes: readonly QType[]): boolean;
  resolveAggregate(name: string, argTypes: readonly QType[], options: { distinct: boolean; star: boolean }): ResolvedAggregate | null;
  /** explicit: CAST/:: (allows e.g. text->int); implicit: assignment and argument coercion rules of PostgreSQL. */
  resolveCast(from: QType, to: QType, mode: 'explicit' | 'assignment' | 'implicit'): CastFn | null;
  /** PostgreSQL's rule for UNION/CASE/COALESCE/IN lists: the common type, or null (then TYPE_MISMATCH). */
  commonType(types: readonly QType[]): QType | null;
  /** Total order for ORDER BY, btree and MIN/MAX (NULLs are handled by the caller). NaN is largest. */
  comparator(type: QType): (a: QValue, b: QValue) => number;
  /** A string such that equal values (per SQL =, e.g. 1.0 and 1.00) give equal keys: GROUP BY, DISTINCT, hash join. */
  hashKey(type: QType): (value: QValue) => string;
  /** PostgreSQL's text output of a value (what ::text and || give). */
  formatText(type: QType, value: QValue): string;
  /** PostgreSQL's input function: a string literal or text cast to the type. */
  parseText(type: QType, text: string): QValue;
  /** The JSON form in query results: BIGINT beyond 2^53 and NUMERIC as strings, timestamps ISO 8601 UTC, JSONB as JSON. */
  toJson(type: QType, value: QValue): unknown;
  /** A JSON request parameter or row value converted to a value of the type (REST rows, $n params). */
  fromJson(type: QType, json: unknown): QValue;
  /** SQL type text for result metadata and catalogs: INTEGER, NUMERIC(10,2), TEXT[], ... */
  typeText(type: QType): string;
  /** Parses a SQL type name as written in DDL or casts ('varchar(20)', 'double precision', 'int[]', 'vector(3)'). */
  parseTypeName(text: string): QType;
}
