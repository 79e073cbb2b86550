/** A local OpenID provider's key set for tests of the JWKS mode: node http, jose keys, rotating. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export type JwksAlg = 'RS256' | 'ES256' | 'EdDSA';

/** A signing key of the provider: its private half signs, its public JWK is (or was) published. */
export interface ProviderKey {
  readonly kid: string;
  readonly alg: JwksAlg;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

/** A key pair with its public JWK (kid, alg, use: sig), not yet published. */
export async function providerKey(alg: JwksAlg, kid: string): Promise<ProviderKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, jwk };
}

/** A signed token; header kid from the key unless `header` overrides it. exp in seconds from now (undefined: 600). */
export async function providerToken(
  key: ProviderKey,
  claims: JWTPayload,
  options: { expiresInSeconds?: number; header?: Record<string, unknown> } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header })
    .setIssuedAt()
    .setExpirationTime(now + (options.expiresInSeconds ?? 600))
    .sign(key.privateKey);
}

export interface JwksServer {
  readonly url: string;
  /** GET requests answered so far (what the cooldown bounds). */
  readonly fetches: number;
  /** The keys published from now on. */
  publish(keys: readonly ProviderKey[]): void;
  /** Answer 500 instead of the key set (true) or serve it again (false). */
  fail(failing: boolean): void;
  close(): Promise<void>;
}

/** Serves `{keys: [...]}` at /.well-known/jwks.json on 127.0.0.1 (port 0: any free one). */
export async function startJwksServer(keys: readonly ProviderKey[], port = 0): Promise<JwksServer> {
  let published = keys.map((k) => k.jwk);
  let failing = false;
  let fetches = 0;
  const server: Server = createServer((request, response) => {
    fetches++;
    if (request.url !== '/.well-known/jwks.json') return void response.writeHead(404).end();
    if (failing) return void response.writeHead(500).end('provider down');
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/.well-known/jwks.json`,
    get fetches() {
      return fetches;
    },
    publish(next) {
      published = next.map((k) => k.jwk);
    },
    fail(next) {
      failing = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
