import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { lazyChildLogger } from '../../protocols/http/lazy-logger.js';

/** A pino logger at `level` whose lines (parsed, time removed) land in `lines`. */
function capture(level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
        lines.push(rest);
      }
      done();
    },
  });
  return { logger: pino({ level, redact: { paths: ['secret'], censor: '[redacted]' } }, stream), lines };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** The request logger made only when a request logs (protocols/http/lazy-logger.ts): the same lines as a pino child. */
describe('lazy request logger', () => {
  it('writes what a pino child with the same bindings writes, setBindings included', async () => {
    const lazy = capture('info');
    const eager = capture('info');
    const lazyLog = lazyChildLogger(lazy.logger.child({ component: 'http' }), { request_id: 'r1' }, {}) as unknown as pino.Logger;
    const eagerLog = eager.logger.child({ component: 'http' }).child({ request_id: 'r1' });
    for (const log of [lazyLog, eagerLog]) {
      log.setBindings({ subject: 'key_1' });
      log.debug({ a: 1 }, 'not at info');
      log.info({ a: 2, secret: 's' }, 'request failed');
      log.error({ err: new Error('boom') }, 'response failed');
      log.child({ extra: true }).warn('from a child');
    }
    await flush();
    expect(lazy.lines).toEqual(eager.lines);
    expect(lazy.lines.map((l) => l['msg'])).toEqual(['request failed', 'response failed', 'from a child']);
    expect(lazy.lines[0]).toMatchObject({ component: 'http', request_id: 'r1', subject: 'key_1', secret: '[redacted]' });
    expect(lazyLog.level).toBe('info');
    expect(lazyLog.isLevelEnabled('debug')).toBe(false);
  });

  it('keeps a shared frozen bindings object as given: two loggers, a later setBindings on top, the same lines as pino children', async () => {
    const lazy = capture('info');
    const eager = capture('info');
    // The auth hook hands every request of a credential one frozen object (authenticate.ts memoOf).
    const shared = Object.freeze({ subject: 'key_2' });
    const lazyLogs = ['a', 'b'].map((id) => lazyChildLogger(lazy.logger, { request_id: id }, {}) as unknown as pino.Logger);
    const eagerLogs = ['a', 'b'].map((id) => eager.logger.child({ request_id: id }));
    for (const logs of [lazyLogs, eagerLogs]) {
      logs[0]!.setBindings(shared);
      logs[1]!.setBindings(shared);
      logs[1]!.setBindings({ tenant: 't1' });
      logs[0]!.info('first');
      logs[1]!.info('second');
    }
    await flush();
    expect(lazy.lines).toEqual(eager.lines);
    expect(lazy.lines).toEqual([
      expect.objectContaining({ request_id: 'a', subject: 'key_2', msg: 'first' }),
      expect.objectContaining({ request_id: 'b', subject: 'key_2', tenant: 't1', msg: 'second' }),
    ]);
    expect(lazy.lines[0]).not.toHaveProperty('tenant');
    expect(shared).toEqual({ subject: 'key_2' });
  });

  it('a route with its own log options gets a real child at once', async () => {
    const { logger, lines } = capture('info');
    const log = lazyChildLogger(logger, { request_id: 'r2' }, { level: 'debug' }) as unknown as pino.Logger;
    log.debug('at the route level');
    await flush();
    expect(lines).toEqual([expect.objectContaining({ request_id: 'r2', msg: 'at the route level' })]);
  });
});
