/** Limits of the GraphQL WebSocket transport (settings SVC_GRAPHQL_WS_*; docs/graphql.md, Subscriptions). */
export interface GraphqlWsLimits {
  /** WebSocket connections open at once on /graphql; past it an upgrade is answered 503 TOO_MANY_CONNECTIONS. */
  readonly graphqlWsConnectionsMax: number;
  /** Operations (subscriptions) running at once on one connection; past it the new one gets LIMIT_EXCEEDED. */
  readonly graphqlWsSubscriptionsPerConnectionMax: number;
  /** Bytes queued for a client that reads too slowly before the connection is closed (1008). */
  readonly graphqlWsSendBufferBytesMax: number;
  /** Time from the upgrade to connection_init before the connection is closed (4408). */
  readonly graphqlWsConnectionInitTimeoutMs: number;
  /** Ping (and the legacy protocol's `ka`) interval; a client that answers no ping within it is dropped. */
  readonly graphqlWsKeepAliveMs: number;
  /** Largest message a client may send. */
  readonly graphqlWsMessageBytesMax: number;
}

export const GRAPHQL_WS_DEFAULTS: GraphqlWsLimits = Object.freeze({
  graphqlWsConnectionsMax: 10_000,
  graphqlWsSubscriptionsPerConnectionMax: 100,
  graphqlWsSendBufferBytesMax: 16 * 1024 * 1024,
  graphqlWsConnectionInitTimeoutMs: 10_000,
  graphqlWsKeepAliveMs: 12_000,
  graphqlWsMessageBytesMax: 1024 * 1024,
});
