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

  it('a route with its own log options gets a real child at once', async () => {
    const { logger, lines } = capture('info');
    const log = lazyChildLogger(logger, { request_id: 'r2' }, { level: 'debug' }) as unknown as pino.Logger;
    log.debug('at the route level');
    await flush();
    expect(lines).toEqual([expect.objectContaining({ request_id: 'r2', msg: 'at the route level' })]);
  });
});
