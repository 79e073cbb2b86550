/**
 * Kinesis for tests: kinesalite (in memory) on 127.0.0.1 and an ephemeral port, a reader over
 * every shard, and a proxy in front of it that counts PutRecords calls and can refuse records the
 * way Kinesis does when a shard is throttled (the refused records are not written, the answer
 * marks them with ProvisionedThroughputExceededException at their index).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  ListShardsCommand,
} from '@aws-sdk/client-kinesis';
import { NodeHttpHandler } from '@smithy/node-http-handler';

/** Fake credentials for both sides: the SDK's default chain reads them from the environment. */
export function useFakeAwsCredentials(): void {
  process.env['AWS_ACCESS_KEY_ID'] = 'AKIDTESTTESTTEST';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'test-secret';
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
}

type Kinesalite = (options: Record<string, unknown>) => http.Server;

export interface KinesisServer {
  readonly url: string;
  readonly client: KinesisClient;
  createStream(name: string, shards: number): Promise<void>;
  /** Every record of every shard, shard by shard, each in the shard's order. */
  readAll(name: string): Promise<ReadRecord[]>;
  stop(): Promise<void>;
}

export interface ReadRecord {
  readonly shardId: string;
  readonly partitionKey: string;
  readonly data: Buffer;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Starts kinesalite in memory (no path: no LevelDB on disk) with a client of it. */
export async function startKinesalite(): Promise<KinesisServer> {
  const kinesalite = createRequire(import.meta.url)('kinesalite') as Kinesalite;
  const server = kinesalite({ createStreamMs: 0, deleteStreamMs: 0, updateStreamMs: 0, shardLimit: 50 });
  const url = await listen(server);
  const client = new KinesisClient({
    region: 'us-east-1',
    endpoint: url,
    credentials: { accessKeyId: 'AKIDTESTTESTTEST', secretAccessKey: 'test-secret' },
    requestHandler: new NodeHttpHandler({ connectionTimeout: 5000, requestTimeout: 30_000, throwOnRequestTimeout: true }),
  });
  return {
    url,
    client,
    async createStream(name, shards) {
      await client.send(new CreateStreamCommand({ StreamName: name, ShardCount: shards }));
      for (let i = 0; i < 100; i++) {
        const s = await client.send(new DescribeStreamSummaryCommand({ StreamName: name }));
        if (s.StreamDescriptionSummary?.StreamStatus === 'ACTIVE') return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`stream ${name} did not become ACTIVE`);
    },
    async readAll(name) {
      const out: ReadRecord[] = [];
      const shards = (await client.send(new ListShardsCommand({ StreamName: name }))).Shards ?? [];
      for (const shard of shards) {
        const start = await client.send(new GetShardIteratorCommand({ StreamName: name, ShardId: shard.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }));
        let iterator = start.ShardIterator;
        for (let page = 0; iterator && page < 1000; page++) {
          const got = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: 10_000 }));
          const records = got.Records ?? [];
          for (const r of records) out.push({ shardId: shard.ShardId!, partitionKey: r.PartitionKey!, data: Buffer.from(r.Data!) });
          if (records.length === 0) break;
          iterator = got.NextShardIterator;
        }
      }
      return out;
    },
    async stop() {
      client.destroy();
      await close(server);
    },
  };
}

/** Which records of a PutRecords call to refuse: (call number from 1, index in the call, partition key, data). */
export type RefusalPolicy = (call: number, index: number, partitionKey: string, data: Buffer) => boolean;

export interface KinesisProxy {
  readonly url: string;
  /** Per PutRecords call: its partition keys, and how many records were refused. */
  readonly calls: { keys: string[]; refused: number }[];
  refuse: RefusalPolicy;
  stop(): Promise<void>;
}

interface PutRecordsBody {
  StreamName: string;
  Records: { PartitionKey: string; Data: string }[];
}

/** An HTTP proxy to `target` that refuses the PutRecords records `refuse` picks (none by default). */
export async function startKinesisProxy(target: string): Promise<KinesisProxy> {
  const proxy: KinesisProxy = { url: '', calls: [], refuse: () => false, stop: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(proxy, target, req, Buffer.concat(chunks), res).catch((error: unknown) => {
        res.statusCode = 502;
        res.end(String(error));
      });
    });
  });
  const url = await listen(server);
  Object.assign(proxy, { url, stop: () => close(server) });
  return proxy;
}

async function handle(proxy: KinesisProxy, target: string, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<void> {
  const operation = String(req.headers['x-amz-target'] ?? '');
  if (!operation.endsWith('.PutRecords')) {
    const answer = await forward(target, req, body);
    return reply(res, answer.status, answer.headers, answer.body);
  }
  const request = JSON.parse(body.toString()) as PutRecordsBody;
  const callNo = proxy.calls.length + 1;
  const refusedAt = new Set<number>();
  request.Records.forEach((r, i) => {
    if (proxy.refuse(callNo, i, r.PartitionKey, Buffer.from(r.Data, 'base64'))) refusedAt.add(i);
  });
  proxy.calls.push({ keys: request.Records.map((r) => r.PartitionKey), refused: refusedAt.size });
  const passed = request.Records.filter((_, i) => !refusedAt.has(i));
  let written: Record<string, unknown>[] = [];
  let failedThere = 0;
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': `proxy-${callNo}` };
  if (passed.length > 0) {
    const answer = await forward(target, req, Buffer.from(JSON.stringify({ ...request, Records: passed })));
    if (answer.status !== 200) return reply(res, answer.status, answer.headers, answer.body);
    const parsed = JSON.parse(answer.body.toString()) as { FailedRecordCount: number; Records: Record<string, unknown>[] };
    written = parsed.Records;
    failedThere = parsed.FailedRecordCount;
  }
  const records: Record<string, unknown>[] = [];
  let next = 0;
  for (let i = 0; i < request.Records.length; i++) {
    if (refusedAt.has(i)) records.push({ ErrorCode: 'ProvisionedThroughputExceededException', ErrorMessage: 'Rate exceeded for shard (test proxy)' });
    else records.push(written[next++]!);
  }
  reply(res, 200, headers, Buffer.from(JSON.stringify({ FailedRecordCount: failedThere + refusedAt.size, Records: records })));
}

function reply(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders, body: Buffer): void {
  res.writeHead(status, { ...headers, 'content-length': body.length });
  res.end(body);
}

async function forward(target: string, req: http.IncomingMessage, body: Buffer): Promise<{ status: number; headers: http.OutgoingHttpHeaders; body: Buffer }> {
  const headers = { ...req.headers, host: new URL(target).host, 'content-length': String(body.length) };
  return new Promise((resolve, reject) => {
    const out = http.request(`${target}${req.url ?? '/'}`, { method: req.method, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        const { 'content-length': _length, 'transfer-encoding': _te, connection: _c, ...rest } = answer.headers;
        resolve({ status: answer.statusCode ?? 502, headers: rest, body: Buffer.concat(chunks) });
      });
      answer.on('error', reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}
