import { closeSync, readdirSync, readlinkSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isSvcError, type SvcError } from '../../core/errors.js';
import { inspectLogDir, listSegments, LOG_LIMITS, openLog, type LogOptions } from '../../log/index.js';
import { asLsn, logOptions, makeTempDir, payloadFor, readAll, removeTempDir, segmentFiles } from './helpers.js';

async function rejection(promise: Promise<unknown>): Promise<SvcError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isSvcError(error)).toBe(true);
  return error as SvcError;
}

function thrown(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (error) {
    expect(isSvcError(error)).toBe(true);
    return error as SvcError;
  }
  throw new Error('expected a throw');
}

describe('log lifecycle', () => {
  let dir: string;
  let options: LogOptions;
  beforeEach(async () => {
    dir = await makeTempDir();
    options = logOptions(dir, { segmentSizeBytesMax: 2048 });
  });
  afterEach(async () => {
    await removeTempDir(dir);
  });

  it('durableLsn$ emits as the head advances and completes on close', async () => {
    const log = await openLog(options);
    const seen: number[] = [];
    let completed = false;
    log.durableLsn$.subscribe({
      next: (value) => seen.push(value),
      complete: () => {
        completed = true;
      },
    });
    for (let n = 1; n <= 3; n++) await log.append(payloadFor(n, 10)).durable;
    await Promise.all([4, 5, 6].map((n) => log.append(payloadFor(n, 10)).durable));
    expect(seen[0]).toBe(0);
    expect(seen.slice(1, 4)).toEqual([1, 2, 3]);
    expect(seen.at(-1)).toBe(6);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    await log.close();
    expect(completed).toBe(true);
  });

  it('read() never returns records that are not yet durable', async () => {
    const log = await openLog(options);
    const results = Array.from({ length: 300 }, (_, i) => log.append(payloadFor(i + 1, 40)));
    expect(log.durableLsn).toBe(0);
    expect(await readAll(log)).toEqual([]);
    let next = 1;
    while (next <= 300) {
      for await (const batch of log.read(asLsn(next), { batchBytesMax: 200 })) {
        for (const entry of batch) {
          expect(entry.lsn).toBeLessThanOrEqual(log.durableLsn);
          expect(entry.lsn).toBe(next++);
        }
      }
      if (next <= 300) await log.waitForDurable(asLsn(next));
    }
    await Promise.all(results.map((r) => r.durable));
    await log.close();
  });

  it('waitForDurable resolves at the head, honours its signal, and fails on close', async () => {
    const log = await openLog(options);
    const reached = log.waitForDurable(asLsn(2));
    log.append(payloadFor(1, 10));
    log.append(payloadFor(2, 10));
    await reached;
    expect(log.durableLsn).toBe(2);
    await log.waitForDurable(asLsn(1));
    const controller = new AbortController();
    const aborted = log.waitForDurable(asLsn(50), controller.signal);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    const pending = log.waitForDurable(asLsn(50));
    await log.close();
    expect((await rejection(pending)).code).toBe('SHUTTING_DOWN');
  });

  it('waitForDurable watches a signal with one abort listener however often it waits, and an abort rejects every wait on it', async () => {
    const log = await openLog(options);
    const controller = new AbortController();
    const other = new AbortController();
    for (let n = 1; n <= 20; n++) {
      const reached = log.waitForDurable(asLsn(n), controller.signal);
      log.append(payloadFor(n, 10));
      await reached;
    }
    // A consumer waits once per group commit: the signal keeps one listener, not one per wait.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const first = log.waitForDurable(asLsn(30), controller.signal);
    const second = log.waitForDurable(asLsn(31), controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const elsewhere = log.waitForDurable(asLsn(30), other.signal);
    const unsignalled = log.waitForDurable(asLsn(30));
    controller.abort(new Error('stop'));
    await expect(first).rejects.toThrow('stop');
    await expect(second).rejects.toThrow('stop');
    await expect(log.waitForDurable(asLsn(32), controller.signal)).rejects.toThrow('stop');
    // Waits on another signal or none are untouched: they resolve when their record is durable.
    for (let n = 21; n <= 30; n++) log.append(payloadFor(n, 10));
    await elsewhere;
    await unsignalled;
    expect(log.durableLsn).toBe(30);
    await log.close();
  });

  it('close() finishes pending appends, then appends and reads are refused; the tail index is written', async () => {
    const log = await openLog(options);
    const results = Array.from({ length: 50 }, (_, i) => log.append(payloadFor(i + 1, 100)));
    const closing = log.close();
    expect(thrown(() => log.append(payloadFor(51, 1))).code).toBe('SHUTTING_DOWN');
    await closing;
    await Promise.all(results.map((r) => r.durable));
    expect(log.durableLsn).toBe(50);
    expect(log.healthy).toBe(false);
    await log.close();
    expect(thrown(() => log.append(payloadFor(51, 1))).code).toBe('SHUTTING_DOWN');
    expect((await rejection(readAll(log))).code).toBe('SHUTTING_DOWN');
    expect(await segmentFiles(dir, 'idx')).toHaveLength(log.segments().length);

    const reopened = await openLog(options);
    expect(reopened.headLsn).toBe(50);
    expect((await readAll(reopened)).map((e) => e.lsn)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    await reopened.close();
  });

  it('an empty trailing segment (crash right after a roll) opens fine and is appended to', async () => {
    const log = await openLog(options);
    for (let n = 1; n <= 30; n++) await log.append(payloadFor(n, 100)).durable;
    const count = log.segments().length;
    await log.close();
    await (await open(join(dir, `${'31'.padStart(20, '0')}.log`), 'wx')).close();
    const reopened = await openLog(options);
    expect(reopened.segments()).toHaveLength(count + 1);
    expect(reopened.headLsn).toBe(30);
    expect(reopened.append(payloadFor(31, 100)).lsn).toBe(31);
    await reopened.sync();
    expect(reopened.segments().at(-1)).toMatchObject({ baseLsn: 31, lastLsn: 31 });
    await reopened.close();
  });

  it('listSegments and inspectLogDir describe the log read-only, even while it is open', async () => {
    const log = await openLog(options);
    for (let n = 1; n <= 40; n++) log.append(payloadFor(n, 100));
    await log.sync();
    expect(await listSegments(dir)).toEqual(log.segments());
    const summary = await inspectLogDir(dir);
    expect(summary).toMatchObject({ firstLsn: 1, lastLsn: 40 });
    expect(summary.segments).toEqual(log.segments());
    await log.close();
    expect(await inspectLogDir(join(dir, 'nothing-here')).catch((e: NodeJS.ErrnoException) => e.code)).toBe('ENOENT');
  });

  it('refuses oversized payloads and bad options with clear errors; whenWritable resolves when the queue is short', async () => {
    const log = await openLog(options);
    const huge = Buffer.allocUnsafe(LOG_LIMITS.recordPayloadBytesMax + 1);
    expect(thrown(() => log.append(huge)).code).toBe('PAYLOAD_TOO_LARGE');
    await log.whenWritable();
    expect(log.stats().pendingBytes).toBe(0);
    expect(log.writable).toBe(true);
    await log.close();
    // Closed: whenWritable() refuses, so writable (which writers check before it) says false.
    expect(log.writable).toBe(false);
    expect((await rejection(log.whenWritable())).code).toBe('SHUTTING_DOWN');
    expect((await rejection(openLog({ ...options, segmentSizeBytesMax: 0 }))).code).toBe('CONFIG_INVALID');
  });

  it('bounds the append queue: whenWritable() waits past the soft bound, append() refuses past the hard one', async () => {
    const log = await openLog(logOptions(dir, { segmentSizeBytesMax: 512 * 1024 * 1024 }));
    const payload = Buffer.alloc(4 * 1024 * 1024, 1);
    const softCount = Math.ceil(LOG_LIMITS.appendQueueBytesMax / payload.length) + 1;
    const durables = Array.from({ length: softCount }, () => log.append(payload).durable);
    let writable = false;
    const waiting = log.whenWritable().then(() => {
      writable = true;
    });
    await Promise.resolve();
    expect(writable).toBe(false);
    expect(log.writable).toBe(false);
    while (log.stats().pendingBytes + payload.length + 20 <= LOG_LIMITS.appendQueueBytesHardMax) durables.push(log.append(payload).durable);
    const refused = thrown(() => log.append(payload));
    expect(refused.code).toBe('LIMIT_EXCEEDED');
    await waiting;
    expect(log.writable).toBe(true);
    await Promise.all(durables);
    expect(log.stats().pendingBytes).toBe(0);
    expect(log.durableLsn).toBe(durables.length);
    await log.close();
  });

  it.runIf(process.platform === 'linux')('a failed write rejects the batch with STORAGE_UNAVAILABLE and refuses appends until reopened', async () => {
    const log = await openLog(options);
    for (let n = 1; n <= 3; n++) await log.append(payloadFor(n, 10)).durable;
    const activePath = log.segments().at(-1)!.path;
    // Pull the descriptor out from under the log: its next write fails (EBADF) like a dead disk would.
    const fd = readdirSync('/proc/self/fd')
      .map(Number)
      .find((n) => {
        try {
          return readlinkSync(`/proc/self/fd/${n}`) === activePath;
        } catch {
          return false;
        }
      });
    expect(fd).toBeDefined();
    closeSync(fd!);
    const failed = log.append(payloadFor(4, 10));
    const error = await rejection(failed.durable);
    expect(error.code).toBe('STORAGE_UNAVAILABLE');
    expect(error.message).toContain('reopened');
    expect(error.cause).toBeDefined();
    expect(log.healthy).toBe(false);
    expect(log.writable).toBe(false);
    expect(log.durableLsn).toBe(3);
    expect(thrown(() => log.append(payloadFor(5, 10))).code).toBe('STORAGE_UNAVAILABLE');
    expect((await rejection(log.waitForDurable(asLsn(4)))).code).toBe('STORAGE_UNAVAILABLE');
    await log.close();
    const reopened = await openLog(options);
    expect(reopened.headLsn).toBe(3);
    expect(reopened.append(payloadFor(4, 10)).lsn).toBe(4);
    await reopened.close();
  });
});
