import { createHmac } from 'node:crypto';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../../core/errors.js';
import { checkSecret, deliveryHeaders, standardWebhooksKey, standardWebhooksSignature, svcSignature } from '../../../sinks/webhooks/signature.js';

const body = Buffer.from(JSON.stringify({ event_id: '01KB0ZQ9W1C6M3V5J7D2A8X4RT', operation: 'INSERT', value: { id: 1, name: 'café ☕' } }));

describe('svcSignature', () => {
  it('matches RFC 4231 test case 2 (HMAC-SHA-256)', () => {
    const sig = svcSignature('Jefe', Buffer.from('what do ya want for nothing?'));
    expect(sig).toBe('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it('is the hex HMAC of the exact bytes, keyed with the secret as given (whsec_ prefix included)', () => {
    for (const secret of ['s3cret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']) {
      expect(svcSignature(secret, body)).toBe(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
    }
    const other = Buffer.concat([body, Buffer.from(' ')]);
    expect(svcSignature('s3cret', other)).not.toBe(svcSignature('s3cret', body));
  });
});

describe('Standard Webhooks', () => {
  it('matches the Standard Webhooks reference vector', () => {
    const sig = standardWebhooksSignature(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      Buffer.from('{"test": 2432232314}'),
    );
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('maps a whsec_ secret to its base64-decoded key and any other to its UTF-8 bytes', () => {
    expect(standardWebhooksKey('whsec_AAECAw==')).toEqual(Buffer.from([0, 1, 2, 3]));
    expect(standardWebhooksKey('plain é')).toEqual(Buffer.from('plain é', 'utf8'));
  });

  it('headers verify with the standardwebhooks package (whsec_ secret)', () => {
    const secret = `whsec_${Buffer.from('a 24-byte key of svcdb!!').toString('base64')}`;
    const headers = deliveryHeaders({ secret, body, eventId: 'EVT1', contentType: 'application/json', sentAtMs: Date.now() });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body.toString()));
  });

  it('headers verify with the standardwebhooks package (plain secret as a raw key)', () => {
    const secret = 'a plain secret, café';
    const headers = deliveryHeaders({ secret, body, eventId: 'EVT2', contentType: 'application/json', sentAtMs: Date.now() });
    expect(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(body, headers)).toEqual(JSON.parse(body.toString()));
  });

  it('a changed body, id or secret fails verification', () => {
    const secret = 'whsec_AAECAwQFBgcICQoLDA0ODw==';
    const headers = deliveryHeaders({ secret, body, eventId: 'EVT3', contentType: 'application/json', sentAtMs: Date.now() });
    const wh = new Webhook(secret);
    expect(() => wh.verify(Buffer.from('{"x":1}'), headers)).toThrow(WebhookVerificationError);
    expect(() => wh.verify(body, { ...headers, 'webhook-id': 'EVT4' })).toThrow(WebhookVerificationError);
    expect(() => new Webhook('whsec_AAECAwQFBgcICQoLDA0ODg==').verify(body, headers)).toThrow(WebhookVerificationError);
  });
});

describe('deliveryHeaders', () => {
  it('gives the spec four headers and the Standard Webhooks three', () => {
    const sentAtMs = Date.UTC(2026, 10, 25, 10, 0, 0, 123);
    const headers = deliveryHeaders({ secret: 'k', body, eventId: 'EVT5', contentType: 'text/plain', sentAtMs });
    expect(headers).toEqual({
      'Content-Type': 'text/plain',
      'X-Svc-Signature': svcSignature('k', body),
      'X-Svc-Event-ID': 'EVT5',
      'X-Svc-Timestamp': '2026-11-25T10:00:00.123Z',
      'webhook-id': 'EVT5',
      'webhook-timestamp': String(Math.floor(sentAtMs / 1000)),
      'webhook-signature': standardWebhooksSignature('k', 'EVT5', Math.floor(sentAtMs / 1000), body),
    });
  });
});

describe('checkSecret', () => {
  it('accepts plain and whsec_ secrets', () => {
    expect(() => checkSecret('x')).not.toThrow();
    expect(() => checkSecret('whsec_AAECAw==')).not.toThrow();
  });

  it.each(['', 'x'.repeat(1025), 'whsec_', 'whsec_not base64!', 'whsec_abc'])('refuses %j with VALIDATION_ERROR', (secret) => {
    expect(() => checkSecret(secret)).toThrow(SvcError);
    try {
      checkSecret(secret);
    } catch (e) {
      expect((e as SvcError).code).toBe('VALIDATION_ERROR');
    }
  });
});
