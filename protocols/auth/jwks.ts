import { SvcError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';

/**
 * An OpenID provider's JSON Web Key Set, fetched over HTTP and cached. Fetches happen on demand
 * (no timer): when none is held, when the one held is older than maxAgeMs, or when a token names
 * a key it does not hold — and never twice within cooldownMs, success or failure, so a flood of
 * tokens with made-up kids (or a provider that is down) costs the provider one request per cooldown.
 * A failed fetch keeps the set held: a provider that is down does not stop tokens signed with
 * keys already known. The key set is compiled by the caller (jwt.ts, which owns jose).
 */
export interface JwksSource<K> {
  /** The key set held, fetched first when there is none or it is stale (unless cooling down). */
  current(): Promise<K>;
  /** A token named a key the set lacks: fetch again, unless cooling down (then null: nothing new). */
  refreshed(): Promise<K | null>;
}

export interface JwksOptions<K> {
  readonly url: URL;
  readonly cooldownMs: number;
  readonly maxAgeMs: number;
  readonly timeoutMs: number;
  readonly bytesMax: number;
  /** Turns the fetched JSON into keys; throws when it is not a key set. */
  readonly compile: (json: unknown) => K;
  readonly logger: Logger;
  readonly nowMs?: () => number;
}

interface Held<K> {
  readonly keys: K;
  readonly fetchedAtMs: number;
}

/** The JWKS at `url`, cached as described on JwksSource. */
export function openJwks<K>(options: JwksOptions<K>): JwksSource<K> {
  const now = options.nowMs ?? Date.now;
  let held: Held<K> | null = null;
  let attemptedAtMs: number | null = null;
  let lastFailure: string | null = null;
  let pending: Promise<void> | null = null;

  const coolingDown = (): boolean => attemptedAtMs !== null && now() - attemptedAtMs < options.cooldownMs;

  const fetchOnce = async (): Promise<void> => {
    attemptedAtMs = now();
    try {
      const keys = options.compile(await fetchJson(options));
      held = { keys, fetchedAtMs: now() };
      lastFailure = null;
      options.logger.info({ jwks_url: options.url.href }, 'JWKS fetched');
    } catch (error) {
      lastFailure = (error as Error).message;
      options.logger.warn({ jwks_url: options.url.href, reason: lastFailure, keys_held: held !== null }, 'JWKS fetch failed');
    }
  };
  /** One fetch at a time: concurrent callers wait for the same one. */
  const refresh = (): Promise<void> => {
    pending ??= fetchOnce().finally(() => {
      pending = null;
    });
    return pending;
  };

  return {
    async current() {
      if (pending !== null) await pending;
      const stale = held === null || now() - held.fetchedAtMs >= options.maxAgeMs;
      if (stale && !coolingDown()) await refresh();
      if (held !== null) return held.keys;
      throw new SvcError(
        'AUTHENTICATION_FAILED',
        `the token cannot be verified now: the key set of the identity provider could not be fetched (${lastFailure ?? 'unknown error'}); retry later`,
        { reason: 'jwks_unavailable' },
      );
    },
    async refreshed() {
      if (pending !== null) {
        await pending;
        return held?.keys ?? null;
      }
      if (coolingDown()) return null;
      await refresh();
      return held?.keys ?? null;
    },
  };
}

/** GET the key set: a JSON body of at most bytesMax, within timeoutMs, no redirects (the URL is the trust anchor). */
async function fetchJson(options: Pick<JwksOptions<unknown>, 'url' | 'timeoutMs' | 'bytesMax'>): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(options.url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(options.timeoutMs) });
  } catch (error) {
    const why = (error as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : causeOf(error);
    throw new Error(`GET ${options.url.href} failed: ${why}`, { cause: error });
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`GET ${options.url.href} answered ${response.status}`);
  }
  const text = await readCapped(response, options.bytesMax);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`GET ${options.url.href} answered a body that is not JSON`, { cause: error });
  }
}

/** node's fetch says "fetch failed" and puts the reason (ECONNREFUSED, ...) in its cause. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

async function readCapped(response: Response, bytesMax: number): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.byteLength;
    // Leaving the loop by a throw cancels the stream (the iterator's return()).
    if (bytes > bytesMax) throw new Error(`the key set is larger than ${bytesMax} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
