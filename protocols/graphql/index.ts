/** GraphQL (docs/graphql.md): per-tenant schemas from the catalog, served at /graphql. */
export { graphqlRoutes, type GraphqlRouteDeps } from './routes.js';
export { TenantSchemas, buildTenantSchema, type GraphqlCatalog, type TenantSchema } from './schema-cache.js';
export type { GraphqlLimits } from './limits.js';
export { buildSchemaModel, type SchemaModel, type TableModel, type ColumnModel, type RelationModel } from './model.js';
export { graphqlNameOf, isGraphqlName } from './names.js';
export { wsSchemaResolver, type WsSchemaDeps } from './ws-schemas.js';
export type { SubscriptionSources } from './live.js';
export { mutationTransactions, type MutationTransactions } from './mutations/index.js';
