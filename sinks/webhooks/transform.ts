/**
 * A webhook's body: the event as JSON (no transform), a nunjucks template, or a JSONPath map.
 * `compileTransform` runs once per webhook (registration uses it to refuse bad input with
 * VALIDATION_ERROR); `apply` runs per event and throws SvcError on a failure, which the dispatcher
 * records as the event's dead letter. The same event always gives the same bytes.
 *
 * template: variables operation, table, key, value, old_value, event_id, sequence, timestamp,
 *   database, transaction_id, and `event` (the whole event). Autoescape off; `{{ value | dump }}`
 *   writes JSON. content_type defaults to application/json, and then the output must parse as JSON.
 *   Sandboxing and per-render budgets: template-sandbox.ts.
 * jsonpath: output field → JSONPath (jsonpath-plus, starting with `$`) over the event. A path
 *   matching nothing gives null, one match its value, several an array of them (so a wildcard that
 *   happens to match once gives a bare value). Filters `?()` run in jsonpath-plus's safe evaluator
 *   (no native eval); a filter that throws on an element counts as no match. The body is a JSON object.
 */
import { JSONPath } from 'jsonpath-plus';
import { SvcError } from '../../core/errors.js';
import type { WebhookTransform } from '../../core/webhook.js';
import type { ChangeEvent } from '../events/change-event.js';
import { WEBHOOK_LIMITS } from './limits.js';
import { compileTemplate } from './template-sandbox.js';
import { renderTemplate } from './template-renderer.js';

export const DEFAULT_CONTENT_TYPE = 'application/json';

export interface TransformOutput {
  readonly body: Buffer;
  readonly contentType: string;
}

export interface CompiledTransform {
  readonly kind: 'event' | 'template' | 'jsonpath';
  /** The body of one event; throws SvcError (VALIDATION_ERROR, or LIMIT_EXCEEDED past bodyBytesMax). */
  apply(event: ChangeEvent): TransformOutput;
  /**
   * apply() as deliveries use it: a template renders in the template worker (bounded heap and
   * time), the others as apply does.
   */
  render(event: ChangeEvent): Promise<TransformOutput>;
}

export interface TransformOptions {
  /** Largest body (bytes); WEBHOOK_LIMITS.bodyBytesMax by default. */
  readonly bodyBytesMax?: number;
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\r\\n]*"))*$`);

function invalid(field: string, message: string, details: Record<string, unknown> = {}, cause?: unknown): never {
  throw new SvcError('VALIDATION_ERROR', `${field}: ${message}`, { field, ...details }, cause);
}

/** Compiles a webhook's transform (null: the event as JSON); VALIDATION_ERROR for a bad one. */
export function compileTransform(def: WebhookTransform | null, options: TransformOptions = {}): CompiledTransform {
  const bodyBytesMax = options.bodyBytesMax ?? WEBHOOK_LIMITS.bodyBytesMax;
  if (def === null || def === undefined) {
    const apply = (event: ChangeEvent): TransformOutput => output(JSON.stringify(event), DEFAULT_CONTENT_TYPE, bodyBytesMax, event);
    return { kind: 'event', apply, render: async (event) => apply(event) };
  }
  const hasTemplate = 'template' in def;
  const hasJsonpath = 'jsonpath' in def;
  if (hasTemplate === hasJsonpath) invalid('transform', 'give either template or jsonpath');
  if (hasTemplate) return compileTemplateTransform(def, bodyBytesMax);
  return compileJsonpathTransform((def as { jsonpath: Readonly<Record<string, string>> }).jsonpath, bodyBytesMax);
}

function compileTemplateTransform(def: { readonly template: string; readonly content_type?: string }, bodyBytesMax: number): CompiledTransform {
  const contentType = def.content_type ?? DEFAULT_CONTENT_TYPE;
  if (typeof contentType !== 'string' || contentType.length > WEBHOOK_LIMITS.contentTypeCharsMax || !CONTENT_TYPE.test(contentType)) {
    invalid('transform.content_type', 'is not a media type such as text/plain; charset=utf-8', { value: contentType });
  }
  const json = isJsonType(contentType);
  const template = compileTemplate(def.template);
  const variablesOf = (event: ChangeEvent): Record<string, unknown> => ({
    operation: event.operation,
    table: event.table,
    key: event.key,
    value: event.value,
    old_value: event.old_value,
    event_id: event.event_id,
    sequence: event.sequence,
    timestamp: event.timestamp,
    database: event.database,
    transaction_id: event.transaction_id,
    event,
  });
  const finish = (text: string, event: ChangeEvent): TransformOutput => {
    const result = output(text, contentType, bodyBytesMax, event);
    if (json) checkJson(text, event);
    return result;
  };
  return {
    kind: 'template',
    apply(event) {
      return finish(
        withEventId(event, () => template.render(variablesOf(event))),
        event,
      );
    },
    async render(event) {
      const text = await withEventIdAsync(event, () => renderTemplate(def.template, variablesOf(event)));
      return finish(text, event);
    },
  };
}

function compileJsonpathTransform(map: Readonly<Record<string, string>>, bodyBytesMax: number): CompiledTransform {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) invalid('transform.jsonpath', 'is a map of output field to JSONPath');
  const entries = Object.entries(map);
  if (entries.length === 0 || entries.length > WEBHOOK_LIMITS.jsonpathFieldsMax) {
    invalid('transform.jsonpath', `needs 1 to ${WEBHOOK_LIMITS.jsonpathFieldsMax} fields`);
  }
  for (const [field, path] of entries) {
    if (field === '') invalid('transform.jsonpath', 'an output field name is empty');
    if (typeof path !== 'string' || !path.startsWith('$') || path.length > WEBHOOK_LIMITS.jsonpathCharsMax) {
      invalid('transform.jsonpath', `the path of ${field} must be a JSONPath starting with $ (at most ${WEBHOOK_LIMITS.jsonpathCharsMax} characters)`, {
        output_field: field,
      });
    }
    checkPath(field, path);
  }
  return {
    kind: 'jsonpath',
    apply(event) {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const [field, path] of entries) {
        let matches: unknown[];
        try {
          matches = query(path, event);
        } catch (err) {
          throw new SvcError(
            'VALIDATION_ERROR',
            `transform.jsonpath: ${field} failed: ${(err as Error).message}`,
            { field: 'transform.jsonpath', output_field: field, event_id: event.event_id },
            err,
          );
        }
        out[field] = matches.length === 0 ? null : matches.length === 1 ? matches[0] : matches;
      }
      return output(JSON.stringify(out), DEFAULT_CONTENT_TYPE, bodyBytesMax, event);
    },
    async render(event) {
      return this.apply(event);
    },
  };
}

/** Every match of a path (library options given explicitly). */
function query(path: string, json: unknown): unknown[] {
  const result: unknown = JSONPath({ path, json: json as object, resultType: 'value', wrap: true, flatten: false, eval: 'safe', ignoreEvalErrors: true });
  return Array.isArray(result) ? result : [];
}

/**
 * Refuses a path that does not compile. jsonpath-plus parses a filter script when it first runs
 * it, so each script of the path is run once on a probe element: a syntax error surfaces there
 * (runtime errors of the probe are ignored, as at delivery).
 */
function checkPath(field: string, path: string): void {
  try {
    const segments = JSONPath.toPathArray(path);
    for (const segment of segments) {
      if (segment.startsWith('?(') || segment.startsWith('(')) query(`$[${segment}]`, [{ a: 1 }]);
    }
    query(path, PROBE);
  } catch (err) {
    invalid('transform.jsonpath', `the path of ${field} does not compile: ${(err as Error).message}`, { output_field: field, path }, err);
  }
}

const PROBE: ChangeEvent = {
  event_id: '01KB0ZQ9W1C6M3V5J7D2A8X4RT',
  timestamp: '2026-01-01T00:00:00.000Z',
  sequence: 1,
  operation: 'UPDATE',
  database: 'default',
  table: 't',
  key: { id: 1 },
  value: { id: 1, a: 'x', n: 2, items: [{ b: 1 }] },
  old_value: { id: 1, a: 'y', n: 1, items: [] },
  transaction_id: 'probe',
};

/** Runs `fn`, adding the event's id to the details of the SvcError it throws. */
function withEventId<T>(event: ChangeEvent, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof SvcError)) throw err;
    throw new SvcError(err.code, err.message, { ...err.details, event_id: event.event_id }, err.cause);
  }
}

async function withEventIdAsync<T>(event: ChangeEvent, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof SvcError)) throw err;
    throw new SvcError(err.code, err.message, { ...err.details, event_id: event.event_id }, err.cause);
  }
}

function isJsonType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

function checkJson(text: string, event: ChangeEvent): void {
  try {
    JSON.parse(text);
  } catch (err) {
    throw new SvcError(
      'VALIDATION_ERROR',
      `transform.template: the output is not JSON (content type is JSON): ${(err as Error).message}`,
      {
        field: 'transform.template',
        event_id: event.event_id,
      },
      err,
    );
  }
}

/** The body's bytes, refused past the limit (the length of a string is checked before it is encoded). */
function output(text: string, contentType: string, bodyBytesMax: number, event: ChangeEvent): TransformOutput {
  const tooLarge = () =>
    new SvcError('LIMIT_EXCEEDED', `the webhook body is larger than ${bodyBytesMax} bytes`, { limit: 'bodyBytesMax', bodyBytesMax, event_id: event.event_id });
  if (text.length > bodyBytesMax) throw tooLarge();
  const body = Buffer.from(text, 'utf8');
  if (body.length > bodyBytesMax) throw tooLarge();
  return { body, contentType };
}
