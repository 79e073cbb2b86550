import type { FastifyPluginAsync } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttp, type Running } from '../../protocols/helpers.js';
import { requireQueryRoute, SvcdbHttpEngine } from './http-engine.js';

/**
 * The svcdb-side SQL tests fail when POST /api/v1/query does not exist (never skip). These check
 * that rule against the real HTTP server of protocols/ with and without a query route.
 */
const answering =
  (status: number, body: unknown): FastifyPluginAsync =>
  async (app) => {
    app.post('/query', async (_request, reply) => reply.code(status).send(body));
  };

describe('requireQueryRoute', () => {
  let running: Running | null = null;
  afterEach(async () => {
    await running?.close();
    running = null;
  });
  const baseOf = (r: Running): string => r.url.replace(/\/$/, '');

  it('fails on the router 404 (NOT_FOUND: no route), saying the route is missing', async () => {
    running = await startHttp();
    await expect(requireQueryRoute(baseOf(running), 'k')).rejects.toThrow(/query route is missing/);
  });

  it('passes for any answer of an existing route, errors included', async () => {
    for (const [status, body] of [
      [200, { success: true, data: [{ '?column?': 1 }] }],
      [404, { error: { code: 'TABLE_NOT_FOUND', message: 'relation "x" does not exist' } }],
      [500, { error: { code: 'INTERNAL_ERROR', message: 'boom' } }],
      [401, { error: { code: 'AUTHENTICATION_REQUIRED', message: 'no key' } }],
    ] as const) {
      running = await startHttp({ plugins: [answering(status, body)] });
      await expect(requireQueryRoute(baseOf(running), 'k')).resolves.toBeUndefined();
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
            return {
              success: true,
              data: [{ b: 'x', a: 1 }],
              metadata: {
                columns: [
                  { name: 'a', type: 'INTEGER' },
                  { name: 'b', type: 'TEXT' },
                ],
              },
            };
          });
        },
      ],
    });
    const engine = new SvcdbHttpEngine(baseOf(running), 'k');
    expect(await engine.execute('ok')).toEqual({
      kind: 'rows',
      columns: [
        { name: 'a', type: 'INTEGER' },
        { name: 'b', type: 'TEXT' },
      ],
      rows: [[1, 'x']],
    });
    expect(await engine.execute('bad')).toEqual({ kind: 'error', message: 'CONSTRAINT_VIOLATION: violates "k"' });
  });
});
