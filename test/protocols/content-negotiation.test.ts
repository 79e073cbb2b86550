import { decode } from '@msgpack/msgpack';
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcError } from '../../core/errors.js';
import { ndjsonOf, negotiate, parseAccept } from '../../protocols/http/content-negotiation.js';
import { startHttp, type Running } from './helpers.js';

describe('negotiate (Accept → response format)', () => {
  it('gives JSON without an Accept, for */*, application/* and application/json', () => {
    for (const accept of [undefined, '', '*/*', 'application/*', 'application/json', 'application/json; charset=utf-8']) {
      expect(negotiate(accept), String(accept)).toEqual({ format: 'json', type: 'application/json' });
    }
  });

  it('gives MessagePack for application/msgpack, answered in the name the client used', () => {
    expect(negotiate('application/msgpack')).toEqual({ format: 'msgpack', type: 'application/msgpack' });
    expect(negotiate('application/x-msgpack')).toEqual({ format: 'msgpack', type: 'application/x-msgpack' });
    expect(negotiate('application/msgpack, */*;q=0.1')).toEqual({ format: 'msgpack', type: 'application/msgpack' });
  });

  it('gives NDJSON for application/x-ndjson', () => {
    expect(negotiate('application/x-ndjson').format).toBe('ndjson');
  });

  it('follows q-values, the most specific range winning, ties going to JSON', () => {
    expect(negotiate('application/json;q=0.5, application/msgpack').format).toBe('msgpack');
    expect(negotiate('application/msgpack;q=0.4, application/x-ndjson;q=0.6').format).toBe('ndjson');
    expect(negotiate('application/msgpack, application/json').format).toBe('json');
    // */* allows JSON, but the specific range refuses it: MessagePack is what is left.
    expect(negotiate('application/json;q=0, */*').format).toBe('msgpack');
  });

  it('falls back to JSON when nothing served is acceptable, and ignores malformed ranges', () => {
    expect(negotiate('text/html')).toEqual({ format: 'json', type: 'application/json' });
    expect(negotiate('text/csv, application/msgpack;q=0')).toEqual({ format: 'json', type: 'application/json' });
    expect(parseAccept('application/msgpack;q=2, nonsense, text/plain;q=0.300')).toEqual([{ type: 'text', subtype: 'plain', q: 0.3 }]);
  });

  it('ndjsonOf writes the rows of a data array one per line, anything else as one line', () => {
    expect(ndjsonOf({ success: true, data: [{ a: 1 }, { a: 'x\ny' }] })).toBe('{"a":1}\n{"a":"x\\ny"}\n');
    expect(ndjsonOf({ success: true, data: [] })).toBe('');
    expect(ndjsonOf({ alive: true })).toBe('{"alive":true}\n');
  });
});

const routes: FastifyPluginAsync = async (app) => {
  app.get('/rows', async () => ({
    success: true,
    data: [
      { id: 1, name: 'a', big: '9007199254740993', nested: { x: [1, 2] } },
      { id: 2, name: null },
    ],
  }));
  app.get('/fail', async () => {
    throw new SvcError('TABLE_NOT_FOUND', 'table "t" does not exist', { table: 't' });
  });
  app.get('/text', async (_request, reply) => reply.type('text/plain; charset=utf-8').send('plain'));
};

describe('Accept negotiation over HTTP (/api/v1)', () => {
  let server: Running;
  const get = (path: string, accept?: string) => fetch(`${server.url}/api/v1${path}`, accept === undefined ? {} : { headers: { accept } });

  beforeAll(async () => {
    server = await startHttp({ plugins: [routes] });
  });
  afterAll(async () => {
    await server.close();
  });

  it('answers JSON by default with Vary: Accept', async () => {
    const res = await get('/rows');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(((await res.json()) as { data: unknown[] }).data).toHaveLength(2);
  });

  it('answers the same object in MessagePack for Accept: application/msgpack', async () => {
    const json = await (await get('/rows')).json();
    const res = await get('/rows', 'application/msgpack');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/msgpack');
    expect(res.headers.get('vary')).toBe('Accept');
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(Number(res.headers.get('content-length'))).toBe(bytes.byteLength);
    expect(decode(bytes)).toEqual(json);
    const legacy = await get('/live', 'application/x-msgpack');
    expect(legacy.headers.get('content-type')).toBe('application/x-msgpack');
    expect(decode(new Uint8Array(await legacy.arrayBuffer()))).toEqual({ alive: true });
  });

  it('answers the rows of `data` as NDJSON lines, other bodies as one line', async () => {
    const rows = await get('/rows', 'application/x-ndjson');
    expect(rows.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = (await rows.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      { id: 1, name: 'a', big: '9007199254740993', nested: { x: [1, 2] } },
      { id: 2, name: null },
    ]);
    const live = await get('/live', 'application/x-ndjson');
    expect(await live.text()).toBe('{"alive":true}\n');
  });

  it('keeps error envelopes JSON whatever Accept says', async () => {
    for (const accept of ['application/msgpack', 'application/x-ndjson']) {
      const res = await get('/fail', accept);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({ code: 'TABLE_NOT_FOUND', details: { table: 't' } });
    }
    const missing = await get('/nope', 'application/msgpack');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it('encodes non-error bodies of a failure status too (a 503 /ready body)', async () => {
    server.status.ready = false;
    try {
      const res = await get('/ready', 'application/msgpack');
      expect(res.status).toBe(503);
      expect(decode(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ ready: false });
    } finally {
      server.status.ready = true;
    }
  });

  it('answers JSON when Accept names nothing served (text/html)', async () => {
    const res = await get('/live', 'text/html');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await res.json()).toEqual({ alive: true });
  });

  it('leaves responses that are not JSON alone', async () => {
    const res = await get('/text', 'application/msgpack');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.headers.get('vary')).toBeNull();
    expect(await res.text()).toBe('plain');
  });

  it('HEAD answers the negotiated headers without a body', async () => {
    const res = await fetch(`${server.url}/api/v1/live`, { method: 'HEAD', headers: { accept: 'application/msgpack' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/msgpack');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });
});
