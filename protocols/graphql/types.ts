import type { ValueNode } from 'graphql';
import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped } from './graphql-lib.js';
import type { SqlType, SqlTypeName } from '../../core/values.js';

/**
 * The GraphQL type of each SQL type (docs/graphql.md, "Type mapping"). Values cross as the SQL
 * engine's JSON forms (docs/sql-types.md): BIGINT a number up to 2^53 and a string beyond,
 * NUMERIC always a string, timestamps ISO 8601 strings, VECTOR an array of numbers.
 */
export const GRAPHQL_TYPE_OF_SQL: Readonly<Record<SqlTypeName, string>> = Object.freeze({
  bool: 'Boolean',
  int2: 'Int',
  int4: 'Int',
  int8: 'bigint',
  numeric: 'numeric',
  float4: 'Float',
  float8: 'float8',
  text: 'String',
  varchar: 'String',
  char: 'String',
  uuid: 'uuid',
  jsonb: 'jsonb',
  timestamp: 'timestamp',
  timestamptz: 'timestamptz',
  date: 'date',
  vector: 'vector',
  array: 'String', // not used: an array column is a list of its element's scalar (graphqlTypeOf)
});

/** The GraphQL type of a column type: a scalar, or for an array column a list of its element's scalar (`[Int]`). */
export function graphqlTypeOf(type: SqlType): string {
  if (type.name === 'array') return `[${GRAPHQL_TYPE_OF_SQL[type.element?.name ?? 'text']}]`;
  return GRAPHQL_TYPE_OF_SQL[type.name];
}

/** The `<x>_comparison_exp` input of a column type (arrays: `<element scalar>_array_comparison_exp`). */
export function comparisonTypeOf(type: SqlType): string {
  if (type.name === 'array') return `${GRAPHQL_TYPE_OF_SQL[type.element?.name ?? 'text']}_array_comparison_exp`;
  return `${GRAPHQL_TYPE_OF_SQL[type.name]}_comparison_exp`;
}

/** Element scalars that array columns may have, each with an `_array_comparison_exp` input. */
export const ARRAY_ELEMENT_SCALARS = [
  ...new Set(['Int', 'Float', 'String', 'Boolean', 'bigint', 'numeric', 'float8', 'uuid', 'timestamp', 'timestamptz', 'date', 'jsonb']),
];

/** Our custom scalars (the built-in ones are Int, Float, String, Boolean). */
export const CUSTOM_SCALARS = ['bigint', 'numeric', 'float8', 'uuid', 'jsonb', 'timestamp', 'timestamptz', 'date', 'vector'] as const;

/** Scalars whose values compare with _gt/_lt (everything but jsonb and vector). */
export const ORDERED_SCALARS = ['Int', 'Float', 'String', 'Boolean', 'bigint', 'numeric', 'float8', 'uuid', 'timestamp', 'timestamptz', 'date'] as const;

/** Whether a column of this type can be summed and averaged. */
export const isNumericSql = (type: SqlType): boolean => ['int2', 'int4', 'int8', 'numeric', 'float4', 'float8'].includes(type.name);

/** Whether min/max apply (ordered, not jsonb/vector/bool). */
export const isComparableSql = (type: SqlType): boolean => !['jsonb', 'vector', 'bool', 'array'].includes(type.name);

const invalid = (scalar: string, why: string): GraphQLError => new GraphQLError(`${scalar} cannot represent ${why}`);

/** A scalar carried as text, or as a number where it fits (bigint, numeric, float8 inputs). */
function textOrNumber(name: string, description: string, pattern: RegExp): GraphQLScalarType {
  const check = (value: unknown): string | number => {
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (typeof value === 'string' && pattern.test(value.trim())) return value.trim();
    throw invalid(name, `the value ${JSON.stringify(value)}`);
  };
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue: check,
    parseLiteral(node: ValueNode) {
      // Literals stay text: the engine reads a BIGINT or NUMERIC from text exactly.
      if (node.kind === Kind.INT || node.kind === Kind.FLOAT || node.kind === Kind.STRING) return check(node.value);
      throw invalid(name, `a ${node.kind} literal`);
    },
  });
}

/** A scalar carried as a string matching `pattern`. */
function text(name: string, description: string, pattern: RegExp): GraphQLScalarType {
  const check = (value: unknown): string => {
    if (typeof value === 'string' && pattern.test(value)) return value;
    throw invalid(name, `the value ${JSON.stringify(value)}`);
  };
  return new GraphQLScalarType({
    name,
    description,
    serialize: (value) => value,
    parseValue: check,
    parseLiteral(node: ValueNode) {
      if (node.kind === Kind.STRING) return check(node.value);
      throw invalid(name, `a ${node.kind} literal`);
    },
  });
}

const jsonb = new GraphQLScalarType({
  name: 'jsonb',
  description: 'A JSONB document, as JSON',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (node, variables) => valueFromASTUntyped(node, variables),
});

const vector = new GraphQLScalarType({
  name: 'vector',
  description: 'A VECTOR(n): a list of numbers (a string "[1,2,3]" is accepted as input)',
  serialize: (value) => value,
  parseValue(value) {
    if (typeof value === 'string' && /^\s*\[.*\]\s*$/.test(value)) return value;
    if (Array.isArray(value) && value.every((x) => typeof x === 'number')) return value;
    throw invalid('vector', `the value ${JSON.stringify(value)}`);
  },
  parseLiteral(node, variables) {
    const value = valueFromASTUntyped(node, variables);
    if (typeof value === 'string' || (Array.isArray(value) && value.every((x) => typeof x === 'number'))) return value;
    throw invalid('vector', `a ${node.kind} literal`);
  },
});

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|NaN|[+-]?Infinity)$/;

/** The custom scalars, keyed by name (the resolvers map of every tenant schema holds them). */
export function customScalars(): Record<(typeof CUSTOM_SCALARS)[number], GraphQLScalarType> {
  return {
    bigint: textOrNumber('bigint', 'BIGINT: a number up to 2^53, a string beyond (exact)', INTEGER),
    numeric: textOrNumber('numeric', 'NUMERIC: a decimal string (exact, keeps its scale)', DECIMAL),
    float8: textOrNumber('float8', 'DOUBLE PRECISION: a number; "NaN", "Infinity", "-Infinity" as strings', DECIMAL),
    uuid: text('uuid', 'UUID: lower-case canonical text', /^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$|^\{[0-9a-fA-F-]{32,36}\}$/),
    jsonb,
    timestamp: text('timestamp', 'TIMESTAMP: ISO 8601 text (UTC, Z)', /\S/),
    timestamptz: text('timestamptz', 'TIMESTAMP WITH TIME ZONE: ISO 8601 text (UTC, Z)', /\S/),
    date: text('date', 'DATE: YYYY-MM-DD', /\S/),
    vector,
  };
}
