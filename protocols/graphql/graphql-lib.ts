import { createRequire } from 'node:module';

/**
 * graphql-js, loaded as CommonJS: mercurius and the federation package `require()` it, and
 * graphql-js refuses objects from its ESM build in its CJS build ("from another module or
 * realm"). Every value import of graphql in svcdb goes through here; types import directly.
 */
const graphql = createRequire(import.meta.url)('graphql') as typeof import('graphql');

export const {
  GraphQLError,
  GraphQLScalarType,
  GraphQLList,
  Kind,
  NoSchemaIntrospectionCustomRule,
  getNamedType,
  getNullableType,
  getOperationAST,
  isInterfaceType,
  isObjectType,
  parse,
  print,
  valueFromASTUntyped,
  GraphQLEnumType,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  createSourceEventStream,
  execute,
  subscribe,
  validate,
  specifiedRules,
} = graphql;

/** The classes as types too (a destructured const is a value only). */
export type GraphQLError = import('graphql').GraphQLError;
export type GraphQLScalarType = import('graphql').GraphQLScalarType;
export type GraphQLEnumType = import('graphql').GraphQLEnumType;
export type GraphQLObjectType = import('graphql').GraphQLObjectType;
export type GraphQLSchema = import('graphql').GraphQLSchema;
