/**
 * The HTTP client of webhook deliveries: the one file that imports undici. One `EndpointClient`
 * per webhook endpoint holds an undici Pool for the URL's origin (keep-alive connections, optional
 * pipelining) and POSTs bodies to it.
 *
 * A result is never thrown: `success` is a 2xx, `gone` a 410 (the dispatcher disables the webhook),
 * `retryable` anything else: another status (3xx included: redirects are not followed, since the
 * signed body would go to a host nobody registered), a network or TLS error, an address outside
 * the allowed ranges, or no answer within the attempt's time limit (connect, headers and body).
 *
 * https: certificates are verified (rejectUnauthorized is always true). A webhook's `tls.ca`
 * replaces the default trust store for that endpoint (as curl's --cacert); `tls.cert` + `tls.key`
 * are the client certificate of mutual TLS.
 *
 * Allowed ranges: sockets resolve names through `guardedLookup` and the connector refuses IP
 * literals outside the ranges, so a refused address is never connected to.
 */
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool, buildConnector, type Dispatcher } from 'undici';
import { assert } from '../../core/errors.js';
import type { WebhookTls } from '../../core/webhook.js';
import { AddressRefusedError, AllowedAddresses, guardedLookup, unbracket } from './allowed-addresses.js';

export { checkUrl } from './allowed-addresses.js';

/** Settings of one endpoint's pool (from core/settings.ts, proposed names in the comments). */
export interface EndpointClientOptions {
  /** Connections to the endpoint's origin (webhookConnectionsPerEndpointMax: the spec's connection_pool_size). */
  readonly connectionsMax: number;
  /** Requests in flight on one connection; 1 = no pipelining (webhookPipelining). */
  readonly pipelining: number;
  /** Time limit of a TCP (and TLS) connect (webhookConnectTimeoutMs). */
  readonly connectTimeoutMs: number;
  /** How long an idle connection is kept (webhookKeepAliveTimeoutMs); a server's Keep-Alive hint may lower it. */
  readonly keepAliveTimeoutMs: number;
  /** SVC_WEBHOOK_ALLOWED_CIDRS; [] allows any address. */
  readonly allowedCidrs: readonly string[] | AllowedAddresses;
  /** The webhook's trust and client certificate (PEM), or null. */
  readonly tls: WebhookTls | null;
  /** Bytes of a failed response's body kept in the error text. */
  readonly errorTextBytesMax: number;
  /** Name resolution (dns.lookup by default); the allowed ranges are applied on top of it. */
  readonly lookup?: LookupFunction;
}

export type PostOutcome = 'success' | 'gone' | 'retryable';
export type PostFailure = 'status' | 'timeout' | 'address_refused' | 'network';

export interface PostResult {
  readonly outcome: PostOutcome;
  /** The response status, null when none came. */
  readonly status: number | null;
  /** Why it failed (short text), null on success. */
  readonly error: string | null;
  readonly failure: PostFailure | null;
  /** From the call to the end of the response (or the failure). */
  readonly durationMs: number;
}

/** Undici's timeout error codes: counted as timeouts like the attempt's own limit. */
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const ERROR_TEXT_CHARS_MAX = 300;
/** Bytes of a 2xx body read and dropped so the connection can be reused; a longer body closes it. */
const SUCCESS_BODY_DUMP_BYTES = 65_536;

export class EndpointClient {
  private readonly pool: Pool;
  private readonly path: string;

  constructor(
    url: string,
    private readonly options: EndpointClientOptions,
  ) {
    assert(Number.isInteger(options.connectionsMax) && options.connectionsMax >= 1, 'connectionsMax is a positive integer');
    assert(Number.isInteger(options.pipelining) && options.pipelining >= 1, 'pipelining is a positive integer');
    assert(options.connectTimeoutMs > 0 && options.keepAliveTimeoutMs > 0, 'connect and keep-alive timeouts are positive');
    const target = new URL(url);
    assert(target.protocol === 'http:' || target.protocol === 'https:', 'an endpoint URL is http or https');
    this.path = `${target.pathname}${target.search}`;
    const allowed = options.allowedCidrs instanceof AllowedAddresses ? options.allowedCidrs : AllowedAddresses.parse(options.allowedCidrs);
    this.pool = new Pool(target.origin, {
      connections: options.connectionsMax,
      pipelining: options.pipelining,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      keepAliveMaxTimeout: options.keepAliveTimeoutMs,
      allowH2: false,
      strictContentLength: true,
      connect: guardedConnector(
        allowed,
        buildConnector({
          timeout: options.connectTimeoutMs,
          rejectUnauthorized: true,
          ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
          ...(options.tls?.cert ? { cert: options.tls.cert } : {}),
          ...(options.tls?.key ? { key: options.tls.key } : {}),
          lookup: guardedLookup(allowed, options.lookup),
        }),
      ),
    });
  }

  /** POSTs `body` with `headers`; the whole exchange must end within `timeoutMs`. */
  async post(body: Uint8Array, headers: Record<string, string>, timeoutMs: number): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const abort = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, timeoutMs);
    try {
      const res = await this.pool.request({
        method: 'POST',
        path: this.path,
        headers,
        body,
        signal: abort.signal,
        // The attempt's own timer is the limit; undici's are a backstop just past it.
        headersTimeout: timeoutMs + 1000,
        bodyTimeout: timeoutMs + 1000,
      });
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        await drop(res.body);
        return { outcome: 'success', status, error: null, failure: null, durationMs: elapsed() };
      }
      const text = await readPrefix(res.body, this.options.errorTextBytesMax);
      const error = short(`HTTP ${status}${text ? `: ${text}` : ''}`);
      return { outcome: status === 410 ? 'gone' : 'retryable', status, error, failure: 'status', durationMs: elapsed() };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const failure: PostFailure =
        timedOut || TIMEOUT_CODES.has(String(code))
          ? 'timeout'
          : err instanceof AddressRefusedError || code === 'SVC_ADDRESS_REFUSED'
            ? 'address_refused'
            : 'network';
      const error = failure === 'timeout' ? `no answer within ${timeoutMs} ms` : describe(err);
      return { outcome: 'retryable', status: null, error: short(error), failure, durationMs: elapsed() };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Connections and requests of the pool (for metrics and tests). */
  stats(): { readonly connected: number; readonly running: number; readonly pending: number } {
    const { connected, running, pending } = this.pool.stats;
    return { connected, running, pending };
  }

  /** Waits for requests in flight, then closes the connections. */
  async close(): Promise<void> {
    await this.pool.close();
  }

  /** Closes the connections now, failing requests in flight. */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}

/** The connector with IP literals checked (names are checked by the lookup). */
function guardedConnector(allowed: AllowedAddresses, base: buildConnector.connector): buildConnector.connector {
  return (opts, callback) => {
    const host = unbracket(opts.hostname);
    if (isIP(host) !== 0 && !allowed.allows(host)) {
      callback(new AddressRefusedError(host, [host]), null);
      return;
    }
    base(opts, callback);
  };
}

type ResponseBody = Dispatcher.ResponseData['body'];

/**
 * Reads and drops a 2xx body so the connection can be reused. The status already decided the
 * outcome: a body cut short (the time limit, a reset) only costs the connection, so its error is
 * not the delivery's.
 */
async function drop(body: ResponseBody): Promise<void> {
  await body.dump({ limit: SUCCESS_BODY_DUMP_BYTES }).catch(() => undefined);
}

/** The first `bytesMax` bytes of a body as text (for the error); the rest is dropped (the connection is then closed). */
async function readPrefix(body: ResponseBody, bytesMax: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= bytesMax) break;
    }
  } catch {
    // Only the error text is lost when a failed response's body is cut short: its status decided.
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, bytesMax).toString('utf8').trim();
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { message?: unknown } };
  const message = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  const cause = typeof e.cause?.message === 'string' ? ` (${e.cause.message})` : '';
  return typeof e.code === 'string' ? `${e.code}: ${message}${cause}` : `${message}${cause}`;
}

function short(text: string): string {
  return text.length <= ERROR_TEXT_CHARS_MAX ? text : `${text.slice(0, ERROR_TEXT_CHARS_MAX - 1)}…`;
}
