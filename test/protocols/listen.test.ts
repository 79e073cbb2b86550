import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SvcError } from '../../core/errors.js';
import { createHttpServer } from '../../protocols/http/server.js';
import { listen, settingLabel } from '../../protocols/listen.js';
import { FakeEngineStatus, captureLogger, testConfig } from './helpers.js';

describe('listen', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  function newServer() {
    const { logger, lines } = captureLogger('info');
    const app = createHttpServer({ config: testConfig(), logger, status: new FakeEngineStatus() });
    cleanups.push(() => app.close());
    return { app, lines };
  }

  it("resolves to a usable URL and does not log fastify's per-address lines", async () => {
    const { app, lines } = newServer();
    const url = await listen(app, { host: '127.0.0.1', port: 0, settingName: settingLabel('httpPort') });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/api/v1/live`)).status).toBe(200);
    expect(lines.filter((l) => String(l.msg).startsWith('Server listening'))).toEqual([]);
    expect(app.log.level).toBe('info');
  });

  it('a wildcard host gives a loopback URL', async () => {
    const { app } = newServer();
    const url = await listen(app, { host: '0.0.0.0', port: 0, settingName: settingLabel('httpPort') });
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a taken port is CONFIG_INVALID naming the port and the setting', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(() => new Promise((resolve) => blocker.close(resolve)));
    const port = (blocker.address() as { port: number }).port;

    const { app } = newServer();
    const error = await listen(app, { host: '127.0.0.1', port, settingName: settingLabel('httpPort') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SvcError);
    expect((error as SvcError).code).toBe('CONFIG_INVALID');
    expect((error as SvcError).message).toBe(`port ${port} is already in use (SVC_HTTP_PORT / --port); choose another or stop the process using it`);
    expect((error as SvcError).details).toMatchObject({ port, setting: 'SVC_HTTP_PORT / --port', errno: 'EADDRINUSE' });
  });

  it('an address not on this machine is CONFIG_INVALID naming SVC_HOST', async () => {
    const { app } = newServer();
    const error = await listen(app, { host: '192.0.2.1', port: 0, settingName: settingLabel('httpPort') }).catch((e: unknown) => e);
    expect((error as SvcError).code).toBe('CONFIG_INVALID');
    expect((error as SvcError).message).toContain('SVC_HOST / --host');
  });

  it('settingLabel reads core/settings.ts', () => {
    expect(settingLabel('opsPort')).toBe('SVC_OPS_PORT / --ops-port');
  });
});
