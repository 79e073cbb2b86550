import { SvcError } from '../../core/errors.js';

/**
 * The bounds of a webhook's own settings (what a registration may ask for), in one place. Server-wide
 * settings (pool sizes, allowed address ranges) are in core/settings.ts; these bound per-webhook input.
 */
export const WEBHOOK_LIMITS = Object.freeze({
  /** retry.max_retries: retries after the first attempt. */
  retriesMax: 100,
  /** retry.initial_retry_delay_ms and retry.max_retry_delay_ms. */
  retryDelayMsMax: 3_600_000,
  /** retry.multiplier. */
  retryMultiplierMax: 10,
  /** retry.timeout_secs: the time limit of one attempt. */
  attemptTimeoutSecsMax: 300,
  /** circuit_breaker.failure_threshold, success_threshold and half_open_max_calls. */
  breakerCountMax: 10_000,
  /** circuit_breaker.timeout_secs: how long the breaker stays open. */
  breakerOpenSecsMax: 86_400,
  /** transform.template: characters of the template text. */
  templateCharsMax: 65_536,
  /** transform.jsonpath: output fields, and characters of one path. */
  jsonpathFieldsMax: 100,
  jsonpathCharsMax: 1_000,
  /** The body a transform may produce (bytes); past it the event is dead-lettered. */
  bodyBytesMax: 1_048_576,
  /** range() in a template: most elements of one call. */
  templateRangeLengthMax: 10_000,
  /** transform.content_type: characters. */
  contentTypeCharsMax: 200,
  /** filter.predicate: bytes of the SQL condition. */
  predicateBytesMax: 4096,
  /** filter.predicate: the time limit of one evaluation (a plain expression takes microseconds). */
  predicateTimeoutMs: 5_000,
  /** url: characters (browsers and proxies handle about 2000 reliably). */
  urlCharsMax: 2048,
  /** tables: how many one webhook follows. */
  tablesMax: 100,
  /** Webhooks one tenant may register (each is a runner with its own queue and breaker). */
  webhooksPerTenantMax: 1000,
  /** tls.ca, tls.cert and tls.key: characters of each PEM text. */
  tlsPemCharsMax: 65_536,
  /** filter.predicate: characters. */
  predicateCharsMax: 8192,
  /** filter.columns: columns listed per table. */
  filterColumnsMax: 1600,
  /** disabled_reason: characters kept (a receiver's answer may be long). */
  disabledReasonCharsMax: 500,
});

/** Time units, so a conversion is never written inline. */
export const MS_PER_SEC = 1000;

/** Refuses (VALIDATION_ERROR) a setting that is not a finite number in [min, max] (an integer when asked). */
export function checkBounded(field: string, value: unknown, min: number, max: number, integer: boolean): void {
  const ok = typeof value === 'number' && Number.isFinite(value) && value >= min && value <= max && (!integer || Number.isInteger(value));
  if (!ok) {
    throw new SvcError('VALIDATION_ERROR', `${field} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`, { field, value });
  }
}
