/**
 * Checking a webhook registration (POST, and PATCH merged over the current definition) before
 * anything is written: every field, with VALIDATION_ERROR naming it (`details.field`), or
 * TABLE_NOT_FOUND naming the table. The route's JSON schema has already refused wrong types and
 * unknown fields for REST callers; the checks of shape here are for the in-process call.
 */
import { X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { DEFAULT_SCHEMA, type TableDef, type TableId } from '../../core/catalog.js';
import { SvcError, tableNotFound } from '../../core/errors.js';
import type { WebhookCircuitBreaker, WebhookDef, WebhookFilter, WebhookRetry, WebhookTls, WebhookTransform } from '../../core/webhook.js';
import type { CatalogState } from '../../projections/index.js';
import { checkUrl, type AllowedAddresses, type ResolveAll } from './allowed-addresses.js';
import { checkBreakerConfig } from './circuit-breaker.js';
import { WEBHOOK_LIMITS } from './limits.js';
import { checkRetryConfig } from './retry.js';
import { checkSecret } from './signature.js';
import { compileTransform } from './transform.js';
import { WEBHOOK_OPERATIONS as FILTER_OPERATIONS } from './filter.js';

/** The operations a webhook may follow: one list, the filter's (SNAPSHOT is a CDC stream's initial copy). */
export const WEBHOOK_OPERATIONS: readonly string[] = FILTER_OPERATIONS;
/** What `operations` is when not given. */
export const DEFAULT_WEBHOOK_OPERATIONS: readonly string[] = Object.freeze(['INSERT', 'UPDATE', 'DELETE']);

/**
 * Compiles a webhook's filter for its tables and operations (query/'s SQL engine does the
 * predicate); throws VALIDATION_ERROR for a filter that does not compile. Its result is not kept:
 * registration only needs to know it compiles.
 */
export type CompileFilter = (tenant: string, tables: TableDef[], operations: readonly string[], filter: WebhookFilter | null) => Promise<unknown>;

export interface RegistrationContext {
  readonly catalog: CatalogState;
  readonly tenant: string;
  readonly allowed: AllowedAddresses;
  readonly compileFilter: CompileFilter;
  /** DNS for checkUrl (tests pass their own). */
  readonly resolve?: ResolveAll;
}

/** A registration to check, every field present (defaults and the current definition merged in). */
export interface RegistrationFields {
  readonly url: unknown;
  readonly secret: unknown;
  /** Names as given (POST, or PATCH with tables), or the ids a definition follows (PATCH without tables). */
  readonly tables: { readonly names: unknown } | { readonly ids: readonly TableId[] };
  readonly operations: unknown;
  readonly filter: unknown;
  readonly transform: unknown;
  readonly retry: WebhookRetry;
  readonly circuit_breaker: WebhookCircuitBreaker;
  readonly tls: unknown;
}

/** The checked fields of a definition: everything but id, tenant, enabled state and times. */
export type CheckedFields = Pick<
  WebhookDef,
  'url' | 'secret' | 'tables' | 'table_ids' | 'operations' | 'filter' | 'transform' | 'retry' | 'circuit_breaker' | 'tls'
>;

function invalid(field: string, message: string, details: Record<string, unknown> = {}, cause?: unknown): never {
  throw new SvcError('VALIDATION_ERROR', `${field}: ${message}`, { field, ...details }, cause);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function onlyKeys(field: string, value: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(value).find((k) => !allowed.includes(k));
  if (unknown !== undefined) invalid(`${field}.${unknown}`, `unknown field (${field} takes ${allowed.join(', ')})`);
}

/** Every field checked, in the order a user reads them; async for DNS (url) and the filter's compiler. */
export async function checkRegistration(fields: RegistrationFields, ctx: RegistrationContext): Promise<CheckedFields> {
  const url = await checkWebhookUrl(fields.url, ctx);
  if (typeof fields.secret !== 'string') invalid('secret', 'is a string');
  checkSecret(fields.secret);
  const { names, ids, defs } = resolveTables(fields.tables, ctx);
  const operations = checkOperations(fields.operations);
  checkRetryConfig(fields.retry);
  checkBreakerConfig(fields.circuit_breaker);
  const transform = checkTransform(fields.transform);
  const filter = checkFilterShape(fields.filter);
  const tls = checkTls(fields.tls, url);
  await ctx.compileFilter(ctx.tenant, defs, operations, filter);
  return {
    url: fields.url as string,
    secret: fields.secret,
    tables: names,
    table_ids: ids,
    operations,
    filter,
    transform,
    retry: fields.retry,
    circuit_breaker: fields.circuit_breaker,
    tls,
  };
}

async function checkWebhookUrl(url: unknown, ctx: RegistrationContext): Promise<URL> {
  if (typeof url !== 'string' || url.length === 0 || url.length > WEBHOOK_LIMITS.urlCharsMax) {
    invalid('url', `is an http(s) URL of at most ${WEBHOOK_LIMITS.urlCharsMax} characters`);
  }
  return checkUrl(url, ctx.allowed, ctx.resolve);
}

/** `orders` is public.orders, `sales.orders` is sales.orders (as the REST table routes read them). */
function tableRef(name: string): { schema: string; name: string } {
  const dot = name.indexOf('.');
  if (dot <= 0 || dot === name.length - 1) return { schema: DEFAULT_SCHEMA, name };
  return { schema: name.slice(0, dot), name: name.slice(dot + 1) };
}

/** How a table is named in a definition and in GET: bare in the public schema, else schema.name. */
export function tableLabel(def: TableDef): string {
  return def.schema === DEFAULT_SCHEMA ? def.name : `${def.schema}.${def.name}`;
}

/** A table a stored definition follows by id was dropped since (a name is refused by tableNotFound). */
function followedTableGone(id: TableId): SvcError {
  const message = `a table this webhook follows (id ${id}) no longer exists: PATCH its tables, or DELETE it`;
  return new SvcError('TABLE_NOT_FOUND', message, { table: String(id), field: 'tables' });
}

/** The tenant's tables, by name (deduplicated, in the order given) or by the ids a definition follows. */
export function resolveTables(
  tables: RegistrationFields['tables'],
  ctx: Pick<RegistrationContext, 'catalog' | 'tenant'>,
): { names: string[]; ids: TableId[]; defs: TableDef[] } {
  const defs: TableDef[] = [];
  if ('ids' in tables) {
    for (const id of tables.ids) {
      const entry = ctx.catalog.table(id);
      if (!entry || entry.def.tenant !== ctx.tenant) {
        throw followedTableGone(id);
      }
      defs.push(entry.def);
    }
  } else {
    const names = tables.names;
    if (!Array.isArray(names) || names.length === 0 || names.length > WEBHOOK_LIMITS.tablesMax) {
      invalid('tables', `is a list of 1 to ${WEBHOOK_LIMITS.tablesMax} table names`);
    }
    for (const [i, name] of names.entries()) {
      if (typeof name !== 'string' || name.length === 0) invalid(`tables.${i}`, 'is a table name');
      const ref = tableRef(name);
      const entry = ctx.catalog.tableByName(ctx.tenant, ref.schema, ref.name);
      if (!entry || entry.def.kind !== 'table') throw tableNotFound(name, { noun: 'table', details: { field: 'tables' } });
      if (!defs.some((d) => d.id === entry.def.id)) defs.push(entry.def);
    }
  }
  return { names: defs.map(tableLabel), ids: defs.map((d) => d.id), defs };
}

function checkOperations(operations: unknown): string[] {
  if (!Array.isArray(operations) || operations.length === 0) {
    invalid('operations', `is a non-empty list of ${WEBHOOK_OPERATIONS.join(', ')}`);
  }
  const out: string[] = [];
  for (const [i, op] of operations.entries()) {
    if (typeof op !== 'string' || !WEBHOOK_OPERATIONS.includes(op)) {
      invalid(`operations.${i}`, `unknown operation ${JSON.stringify(op)} (one of ${WEBHOOK_OPERATIONS.join(', ')})`, { value: op });
    }
    if (!out.includes(op)) out.push(op);
  }
  return out;
}

/** retry or circuit_breaker: the given keys over `base` (defaults, or the current settings); unknown keys refused. */
export function mergeSettings<T extends object>(field: string, base: T, override: unknown): T {
  if (override === undefined || override === null) return base;
  if (!isObject(override)) invalid(field, 'is an object');
  onlyKeys(field, override, Object.keys(base));
  return { ...base, ...override } as T;
}

function checkTransform(transform: unknown): WebhookTransform | null {
  if (transform === undefined || transform === null) return null;
  if (!isObject(transform)) invalid('transform', 'is an object with template or jsonpath');
  if ('template' in transform === 'jsonpath' in transform) invalid('transform', 'give either template (with content_type) or jsonpath');
  onlyKeys('transform', transform, 'template' in transform ? ['template', 'content_type'] : ['jsonpath']);
  const def = transform as unknown as WebhookTransform;
  compileTransform(def);
  return def;
}

function checkFilterShape(filter: unknown): WebhookFilter | null {
  if (filter === undefined || filter === null) return null;
  if (!isObject(filter)) invalid('filter', 'is an object with columns and/or predicate');
  onlyKeys('filter', filter, ['columns', 'predicate']);
  const { columns, predicate } = filter;
  if (predicate !== undefined && (typeof predicate !== 'string' || predicate.trim() === '' || predicate.length > WEBHOOK_LIMITS.predicateCharsMax)) {
    invalid('filter.predicate', `is a SQL condition of 1 to ${WEBHOOK_LIMITS.predicateCharsMax} characters`);
  }
  if (columns !== undefined) {
    if (!isObject(columns)) invalid('filter.columns', 'maps a table name to a list of column names');
    for (const [table, list] of Object.entries(columns)) {
      const ok =
        Array.isArray(list) && list.length > 0 && list.length <= WEBHOOK_LIMITS.filterColumnsMax && list.every((c) => typeof c === 'string' && c !== '');
      if (!ok) invalid(`filter.columns.${table}`, `is a list of 1 to ${WEBHOOK_LIMITS.filterColumnsMax} column names`);
    }
  }
  if (columns === undefined && predicate === undefined) return null;
  return {
    ...(columns === undefined ? {} : { columns: columns as WebhookFilter['columns'] }),
    ...(predicate === undefined ? {} : { predicate: predicate as string }),
  };
}

/** PEM text parsed now (createSecureContext), so a bad certificate fails the registration, not every delivery. */
function checkTls(tls: unknown, url: URL): WebhookTls | null {
  if (tls === undefined || tls === null) return null;
  if (!isObject(tls)) invalid('tls', 'is an object with ca, cert and key (PEM text)');
  onlyKeys('tls', tls, ['ca', 'cert', 'key']);
  for (const part of ['ca', 'cert', 'key'] as const) {
    const pem = tls[part];
    if (pem !== undefined && (typeof pem !== 'string' || pem.length === 0 || pem.length > WEBHOOK_LIMITS.tlsPemCharsMax)) {
      invalid(`tls.${part}`, `is PEM text of at most ${WEBHOOK_LIMITS.tlsPemCharsMax} characters`);
    }
  }
  const { ca, cert, key } = tls as WebhookTls;
  if ((cert === undefined) !== (key === undefined))
    invalid(cert === undefined ? 'tls.cert' : 'tls.key', 'a client certificate needs its key, and a key its certificate');
  if (ca === undefined && cert === undefined) return null;
  if (url.protocol !== 'https:') invalid('tls', 'is for https receivers; the url is http');
  if (ca !== undefined) checkCertificates('tls.ca', ca);
  if (cert !== undefined) checkCertificates('tls.cert', cert);
  try {
    // Loads the client certificate with its key (refusing a key that does not match it).
    createSecureContext({ ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert, key }) });
  } catch (err) {
    invalid('tls', `the PEM text does not load: ${(err as Error).message}`, {}, err);
  }
  return { ...(ca === undefined ? {} : { ca }), ...(cert === undefined ? {} : { cert, key }) };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/** Every certificate of a PEM bundle parses (createSecureContext silently skips text that is not PEM in `ca`). */
function checkCertificates(field: string, pem: string): void {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) invalid(field, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (err) {
      invalid(field, `certificate ${i + 1} does not parse: ${(err as Error).message}`, {}, err);
    }
  }
}
