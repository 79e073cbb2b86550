/**
 * What a part of the GraphQL schema adds to a tenant's schema: SDL text (type extensions such as
 * `type Mutation { … }`, `type Subscription { … }`, or their own types) and the resolvers of
 * its fields, keyed by type name then field name (mercurius's resolvers map).
 */
export interface SchemaContribution {
  readonly sdl: string;
  readonly resolvers: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export const EMPTY_CONTRIBUTION: SchemaContribution = Object.freeze({ sdl: '', resolvers: Object.freeze({}) });
