/** The GraphQL WebSocket transport's public interface (protocols/index.ts re-exports it). */
export { graphqlWebSocket, LEGACY_PROTOCOL, GRAPHQL_TRANSPORT_WS_PROTOCOL, type GraphqlWs, type GraphqlWsDeps, type GraphqlWsStats } from './plugin.js';
export { GRAPHQL_WS_DEFAULTS, type GraphqlWsLimits } from './limits.js';
export type { ResolvedSchema, SchemaResolver } from './operation.js';
