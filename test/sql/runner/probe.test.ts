import type { FastifyPluginAsync } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttp, type Running } from '../../protocols/helpers.js';
import { probeQueryRoute, SvcdbHttpEngine } from './http-engine.js';

/**
 * The svcdb-side SQL tests skip only when POST /api/v1/query does not exist. These check that
 * rule against the real HTTP server of protocols/ with and without a query route.
 */
const answering = (status: number, body: unknown): FastifyPluginAsync => async (app) => {
  app.post('/query', async (_request, reply) => reply.code(status).send(body));
};

describe('probeQueryRoute', () => {
  let running: Running | null = null;
  afterEach(async () => {
    await running?.close();
    running = null;
  });
  const baseOf = (r: Running): string => r.url.replace(/\/$/, '');

  it('says missing for the router 404 (NOT_FOUND: no route), with a reason', async () => {
    running = await startHttp();
    const probe = await probeQueryRoute(baseOf(running), 'k');
    expect(probe.available).toBe(false);
    if (!probe.available) expect(probe.reason).toMatch(/does not exist yet/);
  });

  it('says present for any answer of an existing route, errors included', async () => {
    for (const [status, body] of [
      [200, { success: true, data: [{ '?column?': 1 }] }],
      [404, { error: { code: 'TABLE_NOT_FOUND', message: 'relation "x" does not exist' } }],
      [500, { error: { code: 'INTERNAL_ERROR', message: 'boom' } }],
      [401, { error: { code: 'AUTHENTICATION_REQUIRED', message: 'no key' } }],
    ] as const) {
      running = await startHttp({ plugins: [answering(status, body)] });
      expect(await probeQueryRoute(baseOf(running), 'k')).toEqual({ available: true });
      await running.close();
      running = null;
    }
  });

  it('reads rows in metadata.columns order and reports the error envelope as CODE: message', async () => {
    running = await startHttp({
      plugins: [
        async (app) => {
          app.post('/query', async (request, reply) => {
            const sql = (request.body as { sql: string }).sql;
            if (sql === 'bad') return reply.code(409).send({ error: { code: 'CONSTRAINT_VIOLATION', message: 'violates "k"' } });
            return { success: true, data: [{ b: 'x', a: 1 }], metadata: { columns: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'TEXT' }] } };
          });
        },
      ],
    });
    const engine = new SvcdbHttpEngine(baseOf(running), 'k');
    expect(await engine.execute('ok')).toEqual({ kind: 'rows', columns: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'TEXT' }], rows: [[1, 'x']] });
    expect(await engine.execute('bad')).toEqual({ kind: 'error', message: 'CONSTRAINT_VIOLATION: violates "k"' });
  });
});
