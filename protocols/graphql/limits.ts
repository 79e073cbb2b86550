/** GraphQL limits: from settings (core/settings.ts, graphql*) plus the fixed ones here. */
export interface GraphqlLimits {
  /** SVC_GRAPHQL_DEPTH_MAX: mercurius's queryDepth. */
  readonly graphqlDepthMax: number;
  /** SVC_GRAPHQL_COMPLEXITY_MAX. */
  readonly graphqlComplexityMax: number;
  /** SVC_GRAPHQL_BATCH_OPERATIONS_MAX: operations in one batched POST. */
  readonly graphqlBatchOperationsMax: number;
  /** SVC_GRAPHQL_SCHEMA_CACHE_ENTRIES_MAX: tenant schemas kept built. */
  readonly graphqlSchemaCacheEntriesMax: number;
  readonly graphqlGraphiql: boolean;
  readonly graphqlIntrospection: boolean;
  /** SVC_MAX_RESULT_ROWS: rows one SQL statement may return (as for /query). */
  readonly resultRowsMax: number;
  readonly queryTimeoutMsMax: number;
  readonly queryTextBytesMax: number;
}

/** The cost multiplier of a list field without a literal limit (complexity.ts). */
export const LIST_SIZE_DEFAULT = 100;

/** A GraphQL request's deadline for all its statements together (POST /query's timeout_ms default). */
export const REQUEST_TIMEOUT_MS_DEFAULT = 30_000;

/** Parsed documents mercurius keeps per tenant schema (its `cache` option). */
export const DOCUMENT_CACHE_ENTRIES_MAX = 1024;

/** Nesting levels of one `where` (`_and`/`_or`/`_not`, relations): deeper would overflow the SQL parser's stack. */
export const WHERE_DEPTH_MAX = 32;
