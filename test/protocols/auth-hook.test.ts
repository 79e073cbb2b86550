/**
 * The auth hook around a resource plugin (withAuth): the generic read_only guard, requireRole,
 * and the request's log lines naming the caller. A small plugin stands in for future write routes.
 */
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { loadAdminKey, openAuth, requireRole, withAuth } from '../../protocols/index.js';
import { api, bearer, newKey } from '../helpers/auth.js';
import { tempDir } from '../helpers/stack.js';
import { startHttp, testConfig, type Running } from './helpers.js';

const things: FastifyPluginAsync = async (app) => {
  app.get('/things', async () => ({ things: [] }));
  app.post('/things', async (_request, reply) => reply.code(201).send({ created: true }));
  app.delete('/things/:id', async () => ({ deleted: true }));
  app.post('/query', async (request) => ({ principal: request.principal }));
  app.post('/admin-only', async (request) => {
    requireRole(request, 'admin');
    return { ok: true };
  });
};

describe('withAuth around a resource plugin', () => {
  let http: Running;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const keys: Record<'ro' | 'rw', { key: string; id: string }> = {} as never;
  beforeAll(async () => {
    dir = await tempDir('svcdb-auth-hook-');
    keys.ro = await newKey(dir.dir, { role: 'read_only' });
    keys.rw = await newKey(dir.dir, { role: 'read_write', tenant: 'acme' });
    const adminKey = await loadAdminKey(dir.dir, 'hook-admin-key');
    const gate = await openAuth({ dataDir: dir.dir, adminKey, settings: testConfig(), logger: silentLogger });
    http = await startHttp({ plugins: [withAuth(gate, things)] });
  });
  afterAll(async () => {
    await http?.close();
    await dir?.remove();
  });

  it('read_only may GET and POST the read routes; other methods are 403 before the handler', async () => {
    const ro = bearer(keys.ro.key);
    expect((await api(http.url, '/things', { headers: ro })).status).toBe(200);
    expect((await api(http.url, '/query', { headers: ro, body: {} })).status).toBe(200);
    for (const [method, path] of [
      ['POST', '/things'],
      ['DELETE', '/things/1'],
    ] as const) {
      const r = await api(http.url, path, { method, headers: ro, ...(method === 'POST' ? { body: {} } : {}) });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.error.code).toBe('AUTHORIZATION_DENIED');
      expect(r.body.error.message).toContain('read_only');
    }
  });

  it('read_write may write; requireRole keeps admin routes for admins', async () => {
    const rw = bearer(keys.rw.key);
    expect((await api(http.url, '/things', { headers: rw, body: {} })).status).toBe(201);
    const refused = await api(http.url, '/admin-only', { headers: rw, body: {} });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual({ role: 'read_write', required_role: 'admin' });
    expect((await api(http.url, '/admin-only', { headers: bearer('hook-admin-key'), body: {} })).status).toBe(200);
  });

  it('sets request.principal: subject, credential, role and tenant', async () => {
    const r = await api(http.url, '/query', { headers: bearer(keys.rw.key), body: {} });
    expect(r.body.principal).toEqual({ subject: keys.rw.id, credential: `api_key:${keys.rw.id}`, role: 'read_write', tenant: 'acme' });
    const adminAs = await api(http.url, '/query', { headers: { ...bearer('hook-admin-key'), 'x-tenant-id': 'zeta' }, body: {} });
    expect(adminAs.body.principal).toEqual({ subject: 'admin', credential: 'admin_key:admin', role: 'admin', tenant: 'zeta' });
  });

  it('log lines of a request carry its request_id and subject, never the key', async () => {
    const r = await api(http.url, '/things', { method: 'POST', headers: { ...bearer(keys.ro.key), 'x-request-id': 'req-auth-log-1' }, body: {} });
    expect(r.status).toBe(403);
    const mine = http.lines.filter((l) => l['request_id'] === 'req-auth-log-1');
    expect(mine.some((l) => l.msg === 'request rejected' && l['subject'] === keys.ro.id)).toBe(true);
    expect(JSON.stringify(http.lines)).not.toContain(keys.ro.key);
  });
});
