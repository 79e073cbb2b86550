import { DATA_DIR_MODE_SETTINGS } from './file-modes.js';
import { MIB } from './units.js';

/**
 * Every setting of svcdb, in one table. It drives the environment variables, the CLI flags, the
 * config file keys and `svcdb --help`, so the four can never disagree.
 * Precedence: flag > environment > config file > default.
 */
export type SettingType = 'string' | 'int' | 'bool' | { enum: readonly string[] };

export interface SettingSpec {
  /** Key in the config file and in the Config object. */
  readonly key: string;
  readonly env: string;
  readonly flag: string;
  readonly type: SettingType;
  /** undefined means "unset" (only for optional settings such as the API key). */
  readonly defaultValue: string | number | boolean | undefined;
  readonly doc: string;
  /** Inclusive bounds for integers. */
  readonly min?: number;
  readonly max?: number;
  /** Kept out of logs and `--help` output values. */
  readonly secret?: boolean;
}

export const SETTINGS = [
  { key: 'dataDir', env: 'SVC_DATA_DIR', flag: 'data', type: 'string', defaultValue: './data', doc: 'Directory holding the log and the projections' },
  { key: 'dataDirMode', env: 'SVC_DATA_DIR_MODE', flag: 'data-dir-mode', type: { enum: DATA_DIR_MODE_SETTINGS }, defaultValue: '0700', doc: 'Permissions of the data directory (PostgreSQL\'s data_directory_mode): 0700 only the owner; 0750 also lets the group read. New files are 0600 (0640); a start on a directory or file that others (or the group, beyond this) may read or write is refused' },
  { key: 'host', env: 'SVC_HOST', flag: 'host', type: 'string', defaultValue: '0.0.0.0', doc: 'Address the HTTP listeners bind to' },
  { key: 'httpPort', env: 'SVC_HTTP_PORT', flag: 'port', type: 'int', defaultValue: 8080, min: 0, max: 65535, doc: 'HTTP port of /api/v1 (0 = any free port)' },
  { key: 'opsPort', env: 'SVC_OPS_PORT', flag: 'ops-port', type: 'int', defaultValue: 5432, min: 0, max: 65535, doc: 'Operations port: /health, /health/detailed, /health/ready (0 = off)' },
  { key: 'apiKey', env: 'SVC_API_KEY', flag: 'api-key', type: 'string', defaultValue: undefined, secret: true, doc: 'Admin API key; when unset one is generated on first start, kept hashed in the data dir and printed once' },
  { key: 'logLevel', env: 'SVC_LOG_LEVEL', flag: 'log-level', type: { enum: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] }, defaultValue: 'info', doc: 'Log level of the server (pino)' },
  { key: 'logSegmentSizeBytesMax', env: 'SVC_LOG_SEGMENT_SIZE_BYTES_MAX', flag: 'log-segment-size-bytes-max', type: 'int', defaultValue: 64 * MIB, min: 64 * 1024, max: 1024 * MIB, doc: 'A log segment is rolled when it would grow past this size' },
  { key: 'logDurability', env: 'SVC_LOG_DURABILITY', flag: 'log-durability', type: { enum: ['commit', 'interval'] }, defaultValue: 'commit', doc: 'commit: a write is acknowledged after a (shared) fdatasync; interval: after the write, with an fdatasync every logFsyncIntervalMs (a crash may lose the last interval)' },
  { key: 'logFsyncIntervalMs', env: 'SVC_LOG_FSYNC_INTERVAL_MS', flag: 'log-fsync-interval-ms', type: 'int', defaultValue: 10, min: 1, max: 10_000, doc: 'With logDurability=interval: time between fdatasyncs' },
  { key: 'logRetentionEnabled', env: 'SVC_LOG_RETENTION_ENABLED', flag: 'log-retention-enabled', type: 'bool', defaultValue: false, doc: 'Delete log segments below every consumer\'s durable offset (off: the log is the database, and replay needs it)' },
  { key: 'projectionStallMs', env: 'SVC_PROJECTION_STALL_MS', flag: 'projection-stall-ms', type: 'int', defaultValue: 30_000, min: 10, max: 3_600_000, doc: 'A projection behind the log that has applied nothing for this long is stalled: /ready is false and query_engine unhealthy until it moves' },
  { key: 'logReadBatchBytesMax', env: 'SVC_LOG_READ_BATCH_BYTES_MAX', flag: 'log-read-batch-bytes-max', type: 'int', defaultValue: 4 * MIB, min: 4096, max: 256 * MIB, doc: 'Most bytes of records a consumer reads from the log in one batch' },
  { key: 'shutdownTimeoutMs', env: 'SVC_SHUTDOWN_TIMEOUT_MS', flag: 'shutdown-timeout-ms', type: 'int', defaultValue: 10_000, min: 0, max: 600_000, doc: 'How long a graceful shutdown waits for in-flight requests' },
  { key: 'maxQuerySizeBytes', env: 'SVC_MAX_QUERY_SIZE_BYTES', flag: 'max-query-size-bytes', type: 'int', defaultValue: 1_048_576, min: 1024, max: 64 * MIB, doc: 'Largest SQL text of a request (the spec\'s max_query_size_bytes, reported by /info)' },
  { key: 'maxResultRows', env: 'SVC_MAX_RESULT_ROWS', flag: 'max-result-rows', type: 'int', defaultValue: 100_000, min: 1, max: 10_000_000, doc: 'Most rows a query result may return (the spec\'s max_result_rows; max_rows above it is refused)' },
  { key: 'queryTimeoutMsMax', env: 'SVC_QUERY_TIMEOUT_MS_MAX', flag: 'query-timeout-ms-max', type: 'int', defaultValue: 3_600_000, min: 1000, max: 86_400_000, doc: 'Largest timeout_ms a query may ask for' },
  { key: 'sqlMaterializedRowsMax', env: 'SVC_SQL_MATERIALIZED_ROWS_MAX', flag: 'sql-materialized-rows-max', type: 'int', defaultValue: 5_000_000, min: 1000, max: 1_000_000_000, doc: 'Rows a sort, hash join, hash aggregate, window or DISTINCT may hold in memory before the query fails with LIMIT_EXCEEDED' },
  { key: 'sqlDmlRowsMax', env: 'SVC_SQL_DML_ROWS_MAX', flag: 'sql-dml-rows-max', type: 'int', defaultValue: 1_000_000, min: 1, max: 100_000_000, doc: 'Rows one INSERT, UPDATE or DELETE may change (one log record)' },
  { key: 'sqlPlanCacheEntriesMax', env: 'SVC_SQL_PLAN_CACHE_ENTRIES_MAX', flag: 'sql-plan-cache-entries-max', type: 'int', defaultValue: 512, min: 0, max: 1_000_000, doc: 'Query plans kept for repeated statement texts (0 = no cache)' },
  { key: 'sqlScanCacheRowsMax', env: 'SVC_SQL_SCAN_CACHE_ROWS_MAX', flag: 'sql-scan-cache-rows-max', type: 'int', defaultValue: 2_000_000, min: 0, max: 1_000_000_000, doc: 'Decoded rows of whole tables kept in memory for the next full scan of an unchanged table (about 100-300 bytes per row; 0 = off)' },
  { key: 'asyncQueriesMax', env: 'SVC_ASYNC_QUERIES_MAX', flag: 'async-queries-max', type: 'int', defaultValue: 1000, min: 1, max: 1_000_000, doc: 'Async query records held at once (pending, running and finished); when all are unfinished a new one is refused with 429' },
  { key: 'asyncQueryConcurrencyMax', env: 'SVC_ASYNC_QUERY_CONCURRENCY_MAX', flag: 'async-query-concurrency-max', type: 'int', defaultValue: 4, min: 1, max: 1024, doc: 'Async queries running at once; the others wait as pending, first come first served' },
  { key: 'asyncQueryRetentionMs', env: 'SVC_ASYNC_QUERY_RETENTION_MS', flag: 'async-query-retention-ms', type: 'int', defaultValue: 3_600_000, min: 1000, max: 604_800_000, doc: 'How long a finished async query (and its result) can still be read with GET /query/{id}; the oldest finished ones go earlier when asyncQueriesMax is reached' },
  { key: 'asyncQueryCallbackTimeoutMs', env: 'SVC_ASYNC_QUERY_CALLBACK_TIMEOUT_MS', flag: 'async-query-callback-timeout-ms', type: 'int', defaultValue: 30_000, min: 100, max: 600_000, doc: 'Time limit of one POST of a finished async query to its callback_url' },
  { key: 'asyncQueryCallbackSecret', env: 'SVC_ASYNC_QUERY_CALLBACK_SECRET', flag: 'async-query-callback-secret', type: 'string', defaultValue: undefined, secret: true, doc: 'Key of the X-Svc-Signature HMAC-SHA256 on callback_url deliveries (as webhooks are signed); unset: deliveries are not signed' },
  { key: 'transactionTimeoutMsDefault', env: 'SVC_TRANSACTION_TIMEOUT_MS_DEFAULT', flag: 'transaction-timeout-ms-default', type: 'int', defaultValue: 30_000, min: 100, max: 86_400_000, doc: 'A transaction without timeout_ms is rolled back this long after it began (its expires_at)' },
  { key: 'transactionTimeoutMsMax', env: 'SVC_TRANSACTION_TIMEOUT_MS_MAX', flag: 'transaction-timeout-ms-max', type: 'int', defaultValue: 600_000, min: 100, max: 86_400_000, doc: 'Largest timeout_ms POST /transactions accepts' },
  { key: 'transactionsOpenMax', env: 'SVC_TRANSACTIONS_OPEN_MAX', flag: 'transactions-open-max', type: 'int', defaultValue: 1000, min: 1, max: 1_000_000, doc: 'REST transactions open at once per tenant; one more is refused with 429 until one ends' },
  { key: 'jwtSecret', env: 'SVC_JWT_SECRET', flag: 'jwt-secret', type: 'string', defaultValue: undefined, secret: true, doc: 'HS256 key of bearer JWTs (at least 32 characters, as PostgREST asks); unset: HS256 tokens are refused' },
  { key: 'jwtPublicKey', env: 'SVC_JWT_PUBLIC_KEY', flag: 'jwt-public-key', type: 'string', defaultValue: undefined, doc: 'Public key of RS256 (RSA) or ES256 (EC P-256) bearer JWTs: PEM text, or the path of a PEM file; unset: such tokens are refused' },
  { key: 'jwtIssuer', env: 'SVC_JWT_ISSUER', flag: 'jwt-issuer', type: 'string', defaultValue: undefined, doc: 'When set, a JWT must carry this iss claim' },
  { key: 'jwtAudience', env: 'SVC_JWT_AUDIENCE', flag: 'jwt-audience', type: 'string', defaultValue: undefined, doc: 'When set, a JWT must carry this aud claim (as PostgREST\'s jwt-aud)' },
  { key: 'rateLimitMax', env: 'SVC_RATE_LIMIT_MAX', flag: 'rate-limit-max', type: 'int', defaultValue: 100_000, min: 1, max: 1_000_000_000, doc: 'Requests one credential (or one client address without a valid credential) may make to /api/v1 per rate-limit window; an API key may carry its own' },
  { key: 'rateLimitWindowMs', env: 'SVC_RATE_LIMIT_WINDOW_MS', flag: 'rate-limit-window-ms', type: 'int', defaultValue: 1000, min: 100, max: 86_400_000, doc: 'Length of the fixed rate-limit window' },
  { key: 'bodyLimitBytes', env: 'SVC_BODY_LIMIT_BYTES', flag: 'body-limit-bytes', type: 'int', defaultValue: 16 * MIB, min: 1024, max: 1024 * MIB, doc: 'Largest accepted request body' },
  { key: 'httpsPort', env: 'SVC_HTTPS_PORT', flag: 'https-port', type: 'int', defaultValue: 443, min: 0, max: 65535, doc: 'HTTPS port of /api/v1 (HTTP/2, with HTTP/1.1 for clients without ALPN h2); served only when tlsCert and tlsKey are set (0 = any free port)' },
  { key: 'tlsCert', env: 'SVC_TLS_CERT', flag: 'tls-cert', type: 'string', defaultValue: undefined, doc: 'Certificate chain of the HTTPS listener: PEM text, or the path of a PEM file; set together with tlsKey' },
  { key: 'tlsKey', env: 'SVC_TLS_KEY', flag: 'tls-key', type: 'string', defaultValue: undefined, secret: true, doc: 'Private key of the HTTPS listener: PEM text, or the path of a PEM file; set together with tlsCert' },
  { key: 'headersTimeoutMs', env: 'SVC_HEADERS_TIMEOUT_MS', flag: 'headers-timeout-ms', type: 'int', defaultValue: 20_000, min: 500, max: 600_000, doc: 'Time a client has to send a request\'s headers; past it the connection gets 408 REQUEST_TIMEOUT and is closed (a client sending a byte now and then cannot hold a connection: slowloris)' },
  { key: 'requestTimeoutMs', env: 'SVC_REQUEST_TIMEOUT_MS', flag: 'request-timeout-ms', type: 'int', defaultValue: 120_000, min: 1000, max: 3_600_000, doc: 'Time a client has to send a whole request, body included (at least headersTimeoutMs); the response is not limited by it, so long queries and streams are not cut' },
  { key: 'maxConnections', env: 'SVC_MAX_CONNECTIONS', flag: 'max-connections', type: 'int', defaultValue: 10_000, min: 1, max: 1_000_000, doc: 'Open connections the API listeners (HTTP and HTTPS together) accept; past it a new connection gets one 503 TOO_MANY_CONNECTIONS answer and is closed (the spec\'s max_connections, reported by /info)' },
  { key: 'vectorPort', env: 'SVC_VECTOR_PORT', flag: 'vector-port', type: 'int', defaultValue: undefined, min: 0, max: 65535, doc: 'Port of the vector-compatible (Pinecone) protocol; unset or equal to httpPort: served on the HTTP listener beside /api/v1' },
  { key: 'vectorApiKey', env: 'SVC_VECTOR_API_KEY', flag: 'vector-api-key', type: 'string', defaultValue: undefined, secret: true, doc: 'The vector protocol key (Api-Key header; an admin of the default tenant); svcdb API keys are accepted there too' },
  { key: 'vectorMaxDimension', env: 'SVC_VECTOR_MAX_DIMENSION', flag: 'vector-max-dimension', type: 'int', defaultValue: 20_000, min: 1, max: 65_535, doc: 'Largest dimension of a vector index (Pinecone\'s own limit is 20000)' },
  { key: 'vectorMaxVectors', env: 'SVC_VECTOR_MAX_VECTORS', flag: 'vector-max-vectors', type: 'int', defaultValue: 10_000_000, min: 1, max: 1_000_000_000, doc: 'Most records one vector index may hold; an upsert past it is refused with 400 LIMIT_EXCEEDED' },
  { key: 'vectorMaxMetadataBytes', env: 'SVC_VECTOR_MAX_METADATA_BYTES', flag: 'vector-max-metadata-bytes', type: 'int', defaultValue: 40_960, min: 64, max: 16 * MIB, doc: 'Largest metadata of one vector record, as JSON text (the spec\'s max_metadata_size)' },
  { key: 'vectorEfSearch', env: 'SVC_VECTOR_EF_SEARCH', flag: 'vector-ef-search', type: 'int', defaultValue: 40, min: 1, max: 1000, doc: 'hnsw search beam when a query names none (pgvector\'s hnsw.ef_search, default 40): SQL, POST /vectors/search without ef_search, and the vector protocol\'s /query (which has no such field)' },
  { key: 'vectorBatchSize', env: 'SVC_VECTOR_BATCH_SIZE', flag: 'vector-batch-size', type: 'int', defaultValue: 1000, min: 1, max: 100_000, doc: 'Most vectors one upsert (and ids one delete) may carry' },
  { key: 'cdcBatchEventsMax', env: 'SVC_CDC_BATCH_EVENTS_MAX', flag: 'cdc-batch-events-max', type: 'int', defaultValue: 5000, min: 1, max: 1_000_000, doc: 'Most change events a CDC stream delivers in one batch (one Kafka transaction, or PutRecords calls of up to 500)' },
  { key: 'cdcRetryDelayMsMax', env: 'SVC_CDC_RETRY_DELAY_MS_MAX', flag: 'cdc-retry-delay-ms-max', type: 'int', defaultValue: 30_000, min: 100, max: 3_600_000, doc: 'Longest wait between retries of a failing CDC stream (backoff from 100 ms, doubling)' },
  { key: 'webhookAllowedCidrs', env: 'SVC_WEBHOOK_ALLOWED_CIDRS', flag: 'webhook-allowed-cidrs', type: 'string', defaultValue: undefined, doc: 'Address ranges webhook deliveries may go to: comma-separated CIDRs (10.0.0.0/8,fd00::/8); a URL outside them is refused at registration and every connection is checked after DNS; unset: any address' },
  { key: 'webhookConnectionsPerEndpointMax', env: 'SVC_WEBHOOK_CONNECTIONS_PER_ENDPOINT_MAX', flag: 'webhook-connections-per-endpoint-max', type: 'int', defaultValue: 10, min: 1, max: 10_000, doc: 'Connections kept open to one webhook receiver (origin) at most (the spec\'s connection_pool_size, per endpoint)' },
  { key: 'webhookRequestsInFlightMax', env: 'SVC_WEBHOOK_REQUESTS_IN_FLIGHT_MAX', flag: 'webhook-requests-in-flight-max', type: 'int', defaultValue: 100, min: 1, max: 100_000, doc: 'Webhook deliveries in flight at once over all receivers (the spec\'s max_concurrent_requests); more wait their turn' },
  { key: 'webhookDeliveryWindowSecs', env: 'SVC_WEBHOOK_DELIVERY_WINDOW_SECS', flag: 'webhook-delivery-window-secs', type: 'int', defaultValue: 86_400, min: 60, max: 2_592_000, doc: 'How long the exactly-once ledger remembers a delivered event (the spec\'s delivery_window_secs): within it a delivered event is never sent again' },
  { key: 'webhookConnectTimeoutMs', env: 'SVC_WEBHOOK_CONNECT_TIMEOUT_MS', flag: 'webhook-connect-timeout-ms', type: 'int', defaultValue: 5000, min: 100, max: 600_000, doc: 'Time limit of opening a connection (TCP and TLS) to a webhook receiver; the whole attempt is bounded by the webhook\'s retry.timeout_secs' },
  { key: 'kafkaSsl', env: 'SVC_KAFKA_SSL', flag: 'kafka-ssl', type: 'bool', defaultValue: false, doc: 'Connect to Kafka brokers over TLS (certificates verified)' },
  { key: 'kafkaSslCaFile', env: 'SVC_KAFKA_SSL_CA_FILE', flag: 'kafka-ssl-ca-file', type: 'string', defaultValue: undefined, doc: 'PEM file of the CA that signed the brokers\' certificates (default: the system CAs)' },
  { key: 'kafkaBrokersAllowed', env: 'SVC_KAFKA_BROKERS_ALLOWED', flag: 'kafka-brokers-allowed', type: 'string', defaultValue: undefined, doc: 'Comma list of host:port a CDC stream may name in TO KAFKA (unset: any); required with SASL, so the credentials go only to these brokers' },
  { key: 'kafkaSaslMechanism', env: 'SVC_KAFKA_SASL_MECHANISM', flag: 'kafka-sasl-mechanism', type: { enum: ['none', 'plain', 'scram-sha-256', 'scram-sha-512'] }, defaultValue: 'none', doc: 'SASL mechanism for Kafka brokers (none: no SASL)' },
  { key: 'kafkaSaslUsername', env: 'SVC_KAFKA_SASL_USERNAME', flag: 'kafka-sasl-username', type: 'string', defaultValue: undefined, doc: 'SASL user name for Kafka brokers' },
  { key: 'kafkaSaslPassword', env: 'SVC_KAFKA_SASL_PASSWORD', flag: 'kafka-sasl-password', type: 'string', defaultValue: undefined, secret: true, doc: 'SASL password for Kafka brokers' },
  { key: 'kafkaConnectionTimeoutMs', env: 'SVC_KAFKA_CONNECTION_TIMEOUT_MS', flag: 'kafka-connection-timeout-ms', type: 'int', defaultValue: 3000, min: 100, max: 600_000, doc: 'Time limit of connecting to a Kafka broker' },
  { key: 'kafkaRequestTimeoutMs', env: 'SVC_KAFKA_REQUEST_TIMEOUT_MS', flag: 'kafka-request-timeout-ms', type: 'int', defaultValue: 30_000, min: 100, max: 600_000, doc: 'Time limit of one request to a Kafka broker' },
  { key: 'kafkaTransactionTimeoutMs', env: 'SVC_KAFKA_TRANSACTION_TIMEOUT_MS', flag: 'kafka-transaction-timeout-ms', type: 'int', defaultValue: 60_000, min: 1000, max: 900_000, doc: 'Kafka aborts a CDC transaction left open this long by a producer that went away' },
  { key: 'kinesisEndpoint', env: 'SVC_KINESIS_ENDPOINT', flag: 'kinesis-endpoint', type: 'string', defaultValue: undefined, doc: 'Kinesis endpoint URL override (kinesalite, LocalStack); unset: the AWS endpoint of the stream\'s region' },
  { key: 'graphqlDepthMax', env: 'SVC_GRAPHQL_DEPTH_MAX', flag: 'graphql-depth-max', type: 'int', defaultValue: 15, min: 1, max: 1_000, doc: 'Deepest GraphQL selection (fields within fields) a query may have; deeper is refused before it runs (LIMIT_EXCEEDED)' },
  { key: 'graphqlComplexityMax', env: 'SVC_GRAPHQL_COMPLEXITY_MAX', flag: 'graphql-complexity-max', type: 'int', defaultValue: 100_000, min: 1, max: 1_000_000_000, doc: 'Largest cost of a GraphQL operation (each field 1, a list field times its limit, or 100 without one); costlier is refused before it runs (LIMIT_EXCEEDED)' },
  { key: 'graphqlBatchOperationsMax', env: 'SVC_GRAPHQL_BATCH_OPERATIONS_MAX', flag: 'graphql-batch-operations-max', type: 'int', defaultValue: 100, min: 1, max: 10_000, doc: 'Most operations one batched GraphQL request (a JSON array) may carry' },
  { key: 'graphqlSchemaCacheEntriesMax', env: 'SVC_GRAPHQL_SCHEMA_CACHE_ENTRIES_MAX', flag: 'graphql-schema-cache-entries-max', type: 'int', defaultValue: 256, min: 1, max: 100_000, doc: 'Tenant GraphQL schemas kept built at once (least recently used dropped first; rebuilt on the next request, about 3 ms)' },
  { key: 'graphqlGraphiql', env: 'SVC_GRAPHQL_GRAPHIQL', flag: 'graphql-graphiql', type: 'bool', defaultValue: true, doc: 'Serve the GraphiQL IDE at /graphiql' },
  { key: 'graphqlIntrospection', env: 'SVC_GRAPHQL_INTROSPECTION', flag: 'graphql-introspection', type: 'bool', defaultValue: true, doc: 'Answer GraphQL introspection (__schema, __type); off: such queries fail with GRAPHQL_VALIDATION_FAILED' },
  { key: 'graphqlWsConnectionsMax', env: 'SVC_GRAPHQL_WS_CONNECTIONS_MAX', flag: 'graphql-ws-connections-max', type: 'int', defaultValue: 10_000, min: 1, max: 1_000_000, doc: 'GraphQL WebSocket connections open at once on /graphql (also the change feeds open at once); past it an upgrade is answered 503 TOO_MANY_CONNECTIONS' },
  { key: 'graphqlWsSubscriptionsPerConnectionMax', env: 'SVC_GRAPHQL_WS_SUBSCRIPTIONS_PER_CONNECTION_MAX', flag: 'graphql-ws-subscriptions-per-connection-max', type: 'int', defaultValue: 100, min: 1, max: 100_000, doc: 'Operations (subscriptions) running at once on one GraphQL WebSocket connection; past it the new one gets LIMIT_EXCEEDED' },
  { key: 'graphqlWsSendBufferBytesMax', env: 'SVC_GRAPHQL_WS_SEND_BUFFER_BYTES_MAX', flag: 'graphql-ws-send-buffer-bytes-max', type: 'int', defaultValue: 16 * 1024 * 1024, min: 1024, max: 1024 * 1024 * 1024, doc: 'Bytes queued for a GraphQL WebSocket client that reads too slowly before its connection is closed (1008)' },
  { key: 'graphqlWsConnectionInitTimeoutMs', env: 'SVC_GRAPHQL_WS_CONNECTION_INIT_TIMEOUT_MS', flag: 'graphql-ws-connection-init-timeout-ms', type: 'int', defaultValue: 10_000, min: 100, max: 600_000, doc: 'Time from a GraphQL WebSocket upgrade to connection_init before the connection is closed (4408)' },
  { key: 'graphqlWsKeepAliveMs', env: 'SVC_GRAPHQL_WS_KEEP_ALIVE_MS', flag: 'graphql-ws-keep-alive-ms', type: 'int', defaultValue: 12_000, min: 100, max: 600_000, doc: 'Ping interval of GraphQL WebSocket connections (and the legacy protocol\'s ka); a client that answers no ping within it is dropped' },
  { key: 'graphqlWsMessageBytesMax', env: 'SVC_GRAPHQL_WS_MESSAGE_BYTES_MAX', flag: 'graphql-ws-message-bytes-max', type: 'int', defaultValue: 1024 * 1024, min: 1024, max: 64 * 1024 * 1024, doc: 'Largest message a GraphQL WebSocket client may send (larger closes the connection, 1009)' },
] as const satisfies readonly SettingSpec[];
