/**
 * An independent Kafka consumer for tests: kcat (librdkafka), reading a whole topic from the
 * beginning to its current end. Works against the real broker and the librdkafka mock cluster.
 */
import { spawn } from 'node:child_process';

export interface KcatMessage {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly timestampMs: number | null;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  /** In the order the producer wrote them; a header name may repeat. */
  readonly headers: ReadonlyArray<{ readonly key: string; readonly value: Buffer | null }>;
}

export interface ReadTopicOptions {
  /** read_committed (the default) hides aborted transactions on a real broker; the mock ignores it. */
  readonly isolation?: 'read_committed' | 'read_uncommitted';
  /** kcat is SIGKILLed and the read rejects after this long (default 30 s). */
  readonly timeoutMs?: number;
  /** Only this partition (default: all). */
  readonly partition?: number;
}

interface KcatJson {
  topic: string;
  partition: number;
  offset: number;
  ts?: number;
  tstype?: string;
  key: string | null;
  payload: string | null;
  headers?: Array<string | null>;
}

// kcat -J writes keys, values and headers as JSON strings holding the raw bytes: only ASCII is
// escaped (\" \\ \n \u00XX), every other byte is written as it is (not UTF-8 checked). Decoding
// stdout as latin1 keeps one char per byte, so latin1 re-encoding gives back the exact bytes.
const bytes = (text: string | null | undefined): Buffer | null => (text === null || text === undefined ? null : Buffer.from(text, 'latin1'));

function parseLine(line: string): KcatMessage {
  const raw = JSON.parse(line) as KcatJson;
  const flat = raw.headers ?? [];
  const headers: Array<{ key: string; value: Buffer | null }> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) headers.push({ key: bytes(flat[i])?.toString('utf8') ?? '', value: bytes(flat[i + 1]) });
  const timestampMs = raw.tstype === 'create' || raw.tstype === 'logappend' ? (raw.ts ?? null) : null;
  return { topic: raw.topic, partition: raw.partition, offset: raw.offset, timestampMs, key: bytes(raw.key), value: bytes(raw.payload), headers };
}

/** Every message now in `topic` (from the beginning to the end of each partition), by partition then offset. */
export function readTopicWithKcat(brokers: string, topic: string, options: ReadTopicOptions = {}): Promise<KcatMessage[]> {
  const args = ['-C', '-e', '-q', '-J', '-b', brokers, '-t', topic, '-o', 'beginning', '-X', `isolation.level=${options.isolation ?? 'read_committed'}`];
  if (options.partition !== undefined) args.push('-p', String(options.partition));
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-16 * 1024)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`kcat could not be started (apt-get install kcat): ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        const why = signal === 'SIGKILL' ? `did not reach the end of ${topic} within ${timeoutMs} ms` : `exited with ${code ?? signal}`;
        reject(new Error(`kcat ${args.join(' ')} ${why}: ${stderr}`));
        return;
      }
      const lines = Buffer.concat(stdout)
        .toString('latin1')
        .split('\n')
        .filter((l) => l !== '');
      const messages = lines.map(parseLine);
      messages.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
      resolve(messages);
    });
  });
}

/** A message's key, value and headers as UTF-8 text (the last value of a repeated header wins). */
export function messageText(message: KcatMessage): { key: string | null; value: string | null; headers: Record<string, string | null> } {
  const headers: Record<string, string | null> = {};
  for (const header of message.headers) headers[header.key] = header.value?.toString('utf8') ?? null;
  return { key: message.key?.toString('utf8') ?? null, value: message.value?.toString('utf8') ?? null, headers };
}
