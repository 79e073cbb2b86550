/** Public interface of sinks/: the change-event consumer, CDC streams and their destinations. */
import { readFileSync } from 'node:fs';
import type { TableDef } from '../core/catalog.js';
import type { CdcStreamDef, CdcStreamFilter } from '../core/cdc-stream.js';
import { cdcStreamFilter } from './cdc/stream-filter.js';
import type { StreamFilter } from './cdc/stream-runner.js';
import type { Config } from '../core/config.js';
import { SvcError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Lsn } from '../core/units.js';
import type { CatalogState, Projections } from '../projections/index.js';
import { AvroSchemas, avroEncoder, type AvroSchemaInfo } from './cdc/avro-format.js';
import { jsonEncoder, type Destination, type EventEncoder } from './cdc/destination.js';
import { KafkaDestination, type KafkaClientSettings } from './cdc/kafka-destination.js';
import { KinesisDestination, type KinesisClientSettings } from './cdc/kinesis-destination.js';
import { CdcStreams } from './cdc/streams.js';
import { projectionEventSource, storeOffsets } from './events/projection-source.js';
import type { SqlEngine } from '../query/index.js';
import { compileFilter } from './webhooks/filter.js';
import { DeliveryLedger } from './webhooks/ledger.js';
import { parseCidrList } from './webhooks/allowed-addresses.js';
import { WebhookService } from './webhooks/service.js';
import type { CompileFilter } from './webhooks/registration.js';
import { WebhookDeliveries } from './webhooks/webhooks.js';
import { Semaphore } from './webhooks/lanes.js';

export { CdcStreams, cdcCaptureSpec, type CdcStreamMetrics } from './cdc/streams.js';
export { CHANGE_OPERATIONS, type ChangeEvent, type ChangeOperation, type SourcedEvent } from './events/change-event.js';
export { changeEvents, startOf, type CaptureSpec, type EventSourceDeps, type SourcePosition } from './events/event-source.js';
export { projectionEventSource } from './events/projection-source.js';
export { createChangeFeed, ProjectionChangeFeed } from './events/change-feed.js';
export { ProjectionTableWatch } from './events/table-watch.js';
export { HEADER as KAFKA_HEADERS } from './cdc/kafka-destination.js';
export { WebhookService, DISABLED_BY_REQUEST, type WebhookServiceDeps, type WebhookServiceLimits } from './webhooks/service.js';
export { DEFAULT_WEBHOOK_OPERATIONS, WEBHOOK_OPERATIONS, type CompileFilter } from './webhooks/registration.js';
export { parseCidrList } from './webhooks/allowed-addresses.js';
export { WebhookDeliveries } from './webhooks/webhooks.js';
export type {
  BreakerView,
  DeliveryQuery,
  DeliveryRecord,
  DeliveryStatus,
  WebhookApi,
  WebhookInput,
  WebhookPatch,
  WebhookRuntime,
  WebhookView,
} from '../core/webhook-api.js';
export { AVRO_CONTENT_TYPE, SINGLE_OBJECT_HEADER_BYTES, SINGLE_OBJECT_MAGIC, type AvroSchemaInfo } from './cdc/avro-format.js';

/** Time limit of reading back a topic when a Kafka stream (re)starts. */
const READ_BACK_TIMEOUT_MS = 30_000;

function kafkaSettings(config: Config): KafkaClientSettings {
  const mechanism = config.kafkaSaslMechanism;
  return {
    ssl: config.kafkaSsl,
    sslCaFile: config.kafkaSslCaFile,
    sasl: mechanism === 'none' ? undefined : { mechanism, username: config.kafkaSaslUsername ?? '', password: config.kafkaSaslPassword ?? '' },
    connectionTimeoutMs: config.kafkaConnectionTimeoutMs,
    requestTimeoutMs: config.kafkaRequestTimeoutMs,
    readBackTimeoutMs: READ_BACK_TIMEOUT_MS,
    transactionTimeoutMs: config.kafkaTransactionTimeoutMs,
  };
}

/** The Avro schemas of table definitions, shared by the encoders and the schema look-ups (bounded). */
const avroSchemas = new AvroSchemas();

/** The Avro schema (and fingerprint) the events of a table definition are written with. */
export function avroSchemaFor(table: TableDef): AvroSchemaInfo {
  return avroSchemas.forTable(table).info;
}

/**
 * The Avro schema of a stream's table as the catalog has it now (what its next events are
 * written with), or null when the table is gone. Events written before an ALTER TABLE carry the
 * fingerprint of their own definition: see avroSchemaByFingerprint.
 */
export function streamAvroSchema(def: CdcStreamDef, catalog: CatalogState): AvroSchemaInfo | null {
  const table = catalog.table(def.tableId)?.def;
  return table ? avroSchemaFor(table) : null;
}

/** A schema this process wrote messages with (or served), by its fingerprint as hex of the header bytes; null when unknown. */
export function avroSchemaByFingerprint(fingerprintHex: string): AvroSchemaInfo | null {
  return avroSchemas.byFingerprintHex(fingerprintHex);
}

/** Kinesis client limits: the endpoint is a setting, the rest fixed here (one stream makes one call at a time). */
function kinesisSettings(config: Config): KinesisClientSettings {
  return {
    endpoint: config.kinesisEndpoint,
    connectionTimeoutMs: 5_000,
    requestTimeoutMs: 30_000,
    callAttemptsMax: 3,
    recordAttemptsMax: 8,
    retryDelayMsMin: 100,
    retryDelayMsMax: 2_000,
  };
}

function encoderFor(def: CdcStreamDef): EventEncoder {
  switch (def.format) {
    case 'json':
      return jsonEncoder;
    case 'avro':
      return avroEncoder(avroSchemas);
  }
}

/** Builds the CDC stream registry over the projections (the composition root starts and stops it). */
export function createCdcStreams(projections: Projections, engine: SqlEngine, config: Config, logger: Logger): CdcStreams {
  const compileStreamFilter = (tenant: string, table: TableDef, filter: CdcStreamFilter): Promise<StreamFilter> =>
    cdcStreamFilter(engine, tenant, table, filter);
  const kafka = kafkaSettings(config);
  const tls = kafka.ssl && kafka.sslCaFile ? { ca: readFileSync(kafka.sslCaFile, 'utf8') } : undefined;
  const kinesis = kinesisSettings(config);
  const destinationFor = (def: CdcStreamDef): Destination => {
    const d = def.destination;
    if (d.kind === 'kafka') {
      return new KafkaDestination({ id: def.id, name: def.name, brokers: d.brokers, topic: d.topic }, encoderFor(def), kafka, logger, tls);
    }
    return new KinesisDestination({ id: def.id, name: def.name, stream: d.stream, region: d.region }, encoderFor(def), kinesis, logger);
  };
  const allowed =
    config.kafkaBrokersAllowed
      ?.split(',')
      .map((b) => b.trim())
      .filter((b) => b !== '') ?? null;
  if (config.kafkaSaslMechanism !== 'none' && allowed === null) {
    throw new SvcError(
      'CONFIG_INVALID',
      'SVC_KAFKA_SASL_* sends its credentials to every broker a CDC stream names: set SVC_KAFKA_BROKERS_ALLOWED to the brokers they are for',
      { setting: 'kafkaBrokersAllowed' },
    );
  }
  const streams = new CdcStreams({
    kafkaBrokersAllowed: allowed,
    compileFilter: compileStreamFilter,
    filterFor: async (def) => {
      if (!def.filter) return null;
      const table = projections.catalog.table(def.tableId)?.def;
      return table && table.tenant === def.tenant ? compileStreamFilter(def.tenant, table, def.filter) : null;
    },
    catalog: projections.catalog,
    applied$: { subscribe: (next) => projections.tablesApplied.lsn$.subscribe({ next: () => next(), error: () => undefined }) },
    destinationFor,
    schemaOf: (def) => {
      const info = streamAvroSchema(def, projections.catalog);
      return info ? { schema: info.schema, fingerprint: info.fingerprint } : null;
    },
    source: projectionEventSource(projections),
    offsets: storeOffsets(projections.store),
    headLsn: () => projections.log.durableLsn,
    logger,
    limits: { batchEventsMax: config.cdcBatchEventsMax, readBatchBytesMax: config.logReadBatchBytesMax, retryDelayMsMax: config.cdcRetryDelayMsMax },
  });
  // A paused or failing stream keeps the log it has not delivered: retention stops below it.
  projections.holdRetention('cdc', () => (streams.lowestNeededLsn() ?? projections.log.durableLsn) as Lsn);
  return streams;
}

/** What the composition root passes for webhook metrics (protocols/metrics observes them). */
export interface WebhookObservers {
  readonly onAttempt?: (webhookId: string, outcome: string, durationMs: number) => void;
  readonly onRetry?: (webhookId: string) => void;
}

/**
 * Builds the webhooks: the delivery registry over the projections (runners, ledger) and the
 * service that registers them (REST and the in-process API). The root starts and stops them.
 */
export function createWebhooks(
  projections: Projections,
  engine: SqlEngine,
  config: Config,
  logger: Logger,
  observers: WebhookObservers = {},
): { readonly deliveries: WebhookDeliveries; readonly service: WebhookService } {
  const compile: CompileFilter = (tenant, tables, operations, filter) => compileFilter({ engine, tenant }, { tables, operations, filter });
  let service: WebhookService | null = null;
  const deliveries = new WebhookDeliveries({
    semaphore: new Semaphore(config.webhookRequestsInFlightMax),
    catalog: projections.catalog,
    applied$: { subscribe: (next) => projections.tablesApplied.lsn$.subscribe({ next: () => next(), error: () => undefined }) },
    ledger: new DeliveryLedger(projections.store),
    deliveryWindowMs: config.webhookDeliveryWindowSecs * 1000,
    source: projectionEventSource(projections),
    logger,
    limits: {
      batchEventsMax: config.cdcBatchEventsMax,
      readBatchBytesMax: config.logReadBatchBytesMax,
      pendingEventsMax: WEBHOOK_PENDING_EVENTS_MAX,
      connectionsPerEndpointMax: config.webhookConnectionsPerEndpointMax,
      connectTimeoutMs: config.webhookConnectTimeoutMs,
      allowedCidrs: parseCidrList(config.webhookAllowedCidrs),
      positionSaveIntervalMs: WEBHOOK_POSITION_SAVE_INTERVAL_MS,
    },
    filterFor: (def) => {
      const tables = def.table_ids.map((id) => projections.catalog.table(id)?.def).filter((t): t is TableDef => t !== undefined && t.tenant === def.tenant);
      return compileFilter({ engine, tenant: def.tenant }, { tables, operations: def.operations, filter: def.filter });
    },
    onGone: async (def, reason) => {
      await service?.disable(def.tenant, def.id, reason);
    },
    ...(observers.onAttempt ? { onAttempt: observers.onAttempt } : {}),
    ...(observers.onRetry ? { onRetry: observers.onRetry } : {}),
  });
  // A disabled, failing or quiet webhook keeps the log it has not delivered.
  projections.holdRetention('webhooks', () => (deliveries.lowestNeededLsn() ?? projections.log.durableLsn) as Lsn);
  service = new WebhookService({ projections, runtime: deliveries, compileFilter: compile, allowedCidrs: parseCidrList(config.webhookAllowedCidrs) });
  return { deliveries, service };
}

/** Events read and not yet done per webhook, before reading waits. */
const WEBHOOK_PENDING_EVENTS_MAX = 10_000;
/** A webhook's position in the log is saved at most this often (and when its loop stops). */
const WEBHOOK_POSITION_SAVE_INTERVAL_MS = 500;
