/**
 * The Kinesis destination (the AWS SDK v3, the one file that imports it). At least once: Kinesis
 * has no transactions, and a stream cannot be asked cheaply which events it already holds, so
 * open() returns null and the runner resumes from its local offset, written after each delivered
 * batch. A batch delivered but not yet recorded when the process stopped is sent again after a
 * restart, with the same event ids and sequences (readers drop what they have seen).
 *
 * Per-key order: a PutRecords call carries at most one record per partition key, and only the
 * refused records of a call are put again, with backoff, before the later events of their keys
 * (kinesis-records.ts). After `recordAttemptsMax` refusals of one record the batch fails, so the
 * stream shows `failing` and the runner retries it from the local offset.
 *
 * Credentials come from the SDK's default chain (environment, shared files, container or
 * instance roles), the region from the stream's definition, the endpoint from
 * SVC_KINESIS_ENDPOINT when set (kinesalite, LocalStack).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { DescribeStreamSummaryCommand, KinesisClient, PutRecordsCommand, type PutRecordsResultEntry } from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { assert, SvcError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { SourcedEvent } from '../events/change-event.js';
import type { Destination, EventEncoder, ResumePoint } from './destination.js';
import { PutPlan, toRecord, type PendingRecord } from './kinesis-records.js';

/** Client settings (SVC_KINESIS_ENDPOINT and the limits of sinks/index.ts). */
export interface KinesisClientSettings {
  /** Endpoint URL override; undefined: the AWS endpoint of the stream's region. */
  readonly endpoint: string | undefined;
  readonly connectionTimeoutMs: number;
  /** Time limit of one HTTP request (the SDK retries it within `callAttemptsMax`). */
  readonly requestTimeoutMs: number;
  /** Attempts of one call by the SDK (network errors, throttled calls), first one included. */
  readonly callAttemptsMax: number;
  /** Times one record may be refused by PutRecords before the batch fails. */
  readonly recordAttemptsMax: number;
  /** Wait after a partly refused call: from the min, doubling, capped at the max. */
  readonly retryDelayMsMin: number;
  readonly retryDelayMsMax: number;
}

interface StreamIdentity {
  readonly id: string;
  readonly name: string;
  /** The Kinesis stream's name and region. */
  readonly stream: string;
  readonly region: string;
}

const WRITABLE = new Set(['ACTIVE', 'UPDATING']);

export class KinesisDestination implements Destination {
  private client: KinesisClient | null = null;

  constructor(
    private readonly stream: StreamIdentity,
    private readonly encoder: EventEncoder,
    private readonly settings: KinesisClientSettings,
    private readonly logger: Logger,
  ) {}

  /** Checks that the stream exists and takes writes; null: the runner resumes from its local offset. */
  async open(signal: AbortSignal): Promise<ResumePoint | null> {
    await this.close();
    const client = this.newClient();
    try {
      const summary = await client.send(new DescribeStreamSummaryCommand({ StreamName: this.stream.stream }), { abortSignal: signal });
      const state = summary.StreamDescriptionSummary?.StreamStatus ?? 'UNKNOWN';
      if (!WRITABLE.has(state)) {
        throw new SvcError('INVALID_STATE', `Kinesis stream '${this.stream.stream}' in ${this.stream.region} is ${state}, not ACTIVE`, { status: state });
      }
    } catch (error) {
      client.destroy();
      throw this.wrap('DescribeStreamSummary', error);
    }
    this.client = client;
    return null;
  }

  /** Puts the events in PutRecords calls; returns once every one was written. */
  async deliver(events: readonly SourcedEvent[], signal: AbortSignal): Promise<void> {
    const client = this.client;
    assert(client, 'deliver before open');
    // Never return without delivering: the runner records the batch as delivered when this returns.
    signal.throwIfAborted();
    const plan = new PutPlan(events.map((e) => toRecord(e, this.encoder)));
    let calls = 0;
    let refusedTotal = 0;
    let refusedInARow = 0;
    while (plan.remaining > 0) {
      const call = plan.nextCall();
      const refused = await this.put(client, call, signal);
      calls++;
      plan.settle(call, refused);
      if (refused.size === 0) {
        refusedInARow = 0;
        continue;
      }
      refusedTotal += refused.size;
      refusedInARow++;
      this.checkRefusals(refused);
      await sleep(this.retryDelayMs(refusedInARow), undefined, { signal });
    }
    this.logger.debug({ stream: this.stream.name, events: events.length, calls, refused: refusedTotal }, 'cdc: kinesis batch delivered');
    if (refusedTotal > 0) {
      this.logger.info(
        { stream: this.stream.name, kinesisStream: this.stream.stream, refused: refusedTotal, calls },
        'cdc: kinesis refused records; put again',
      );
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    client?.destroy();
  }

  private newClient(): KinesisClient {
    const s = this.settings;
    const agent = { keepAlive: true, maxSockets: 2 };
    return new KinesisClient({
      region: this.stream.region,
      ...(s.endpoint !== undefined ? { endpoint: s.endpoint } : {}),
      maxAttempts: s.callAttemptsMax,
      retryMode: 'standard',
      // HTTP/1.1 with time limits (the client's default handler for Kinesis is HTTP/2, without them).
      requestHandler: new NodeHttpHandler({
        connectionTimeout: s.connectionTimeoutMs,
        requestTimeout: s.requestTimeoutMs,
        throwOnRequestTimeout: true,
        httpAgent: agent,
        httpsAgent: agent,
      }),
    });
  }

  /** One PutRecords call; returns the records the service refused. */
  private async put(client: KinesisClient, call: readonly PendingRecord[], signal: AbortSignal): Promise<Set<PendingRecord>> {
    let entries: PutRecordsResultEntry[];
    try {
      const result = await client.send(
        new PutRecordsCommand({ StreamName: this.stream.stream, Records: call.map((r) => ({ PartitionKey: r.partitionKey, Data: r.data })) }),
        { abortSignal: signal },
      );
      entries = result.Records ?? [];
    } catch (error) {
      throw this.wrap('PutRecords', error);
    }
    if (entries.length !== call.length) {
      throw new Error(`Kinesis PutRecords to stream '${this.stream.stream}' answered ${entries.length} results for ${call.length} records`);
    }
    const refused = new Set<PendingRecord>();
    entries.forEach((entry, i) => {
      if (entry.ErrorCode === undefined && entry.SequenceNumber !== undefined) return;
      const record = call[i]!;
      record.refusals++;
      record.lastRefusal = `${entry.ErrorCode ?? 'no sequence number'}: ${entry.ErrorMessage ?? ''}`;
      refused.add(record);
    });
    return refused;
  }

  /** Fails the batch once a record was refused `recordAttemptsMax` times. */
  private checkRefusals(refused: ReadonlySet<PendingRecord>): void {
    for (const record of refused) {
      if (record.refusals < this.settings.recordAttemptsMax) continue;
      throw new Error(
        `Kinesis stream '${this.stream.stream}' refused change event ${record.event.sequence} ${record.refusals} times (last: ${record.lastRefusal}); ${refused.size} record(s) of the call refused`,
      );
    }
  }

  private retryDelayMs(refusedInARow: number): number {
    const { retryDelayMsMin: min, retryDelayMsMax: max } = this.settings;
    return Math.min(max, min * 2 ** Math.min(refusedInARow - 1, 20));
  }

  /** The SDK's error, wrapped once with a message that names the stream (the status shows it). */
  private wrap(operation: string, error: unknown): Error {
    if (error instanceof SvcError) return error;
    const name = (error as { name?: string }).name ?? 'Error';
    const message = error instanceof Error ? error.message : String(error);
    const where = `Kinesis stream '${this.stream.stream}' in ${this.stream.region}`;
    if (name === 'ResourceNotFoundException') {
      return new SvcError('NOT_FOUND', `${where} does not exist (${operation}: ${message})`, { stream: this.stream.stream, region: this.stream.region }, error);
    }
    return new Error(`${where}: ${operation} failed: ${name}: ${message}`, { cause: error });
  }
}
