/**
 * A typed fetch client of one collection, driven by the server's OpenAPI document: each call finds
 * its method and path by operationId in the document, and checks the request body and the answer
 * against the document's schemas (ajv), so a client generated from the document would work too.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;
type Operation = { method: string; path: string; requestSchema: Json | null; responses: Record<string, Json | null> };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** ajv for OpenAPI 3.0 schemas: nullable and readOnly are its keywords; formats checked where they carry meaning. */
function openApiAjv(): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addFormat('uuid', UUID);
  ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s) && !Number.isNaN(Date.parse(s)));
  ajv.addFormat('date', /^\d{4}-\d\d-\d\d$/);
  ajv.addFormat('decimal', /^-?(\d+(\.\d*)?|\.\d+)$|^-?Infinity$|^NaN$/);
  for (const name of ['int32', 'int64', 'float', 'double']) ajv.addFormat(name, true);
  return ajv;
}

const jsonSchemaOf = (node: any): Json | null => node?.content?.['application/json']?.schema ?? null;

/** The operations of a dereferenced document, by operationId. */
function operationsOf(doc: any): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[method];
      if (!op) continue;
      const responses = Object.fromEntries(Object.entries<any>(op.responses).map(([status, r]) => [status, jsonSchemaOf(r)]));
      out.set(op.operationId, { method: method.toUpperCase(), path, requestSchema: jsonSchemaOf(op.requestBody), responses });
    }
  }
  return out;
}

export class SchemaMismatch extends Error {}

export interface TypedCollection<R extends { id: string }, I> {
  list(query?: { limit?: number; offset?: number }): Promise<R[]>;
  create(input: I): Promise<R>;
  get(id: string): Promise<R>;
  replace(id: string, input: I): Promise<R>;
  update(id: string, patch: Partial<I>): Promise<R>;
  remove(id: string): Promise<void>;
}

/** A client of `collection` as the document at `${baseUrl}/v1/openapi.json` describes it. */
export async function typedCollection<R extends { id: string }, I>(baseUrl: string, key: string, collection: string): Promise<TypedCollection<R, I>> {
  const headers = { 'x-api-key': key };
  const raw = (await (await fetch(`${baseUrl}/v1/openapi.json`, { headers })).json()) as Parameters<typeof SwaggerParser.dereference>[0];
  const doc: any = await SwaggerParser.dereference(raw);
  const server = doc.servers[0].url as string;
  const operations = operationsOf(doc);
  const ajv = openApiAjv();
  const compiled = new Map<Json, ValidateFunction>();
  const check = (schema: Json, value: unknown, what: string): void => {
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
    if (!validate(value)) throw new SchemaMismatch(`${what}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value)}`);
  };
  async function call(operationId: string, params: Record<string, string>, body?: unknown, query = ''): Promise<unknown> {
    const op = operations.get(operationId);
    if (!op) throw new SchemaMismatch(`the document has no operation ${operationId}`);
    if (body !== undefined && op.requestSchema) check(op.requestSchema, body, `${operationId} request`);
    const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name]!));
    const init: RequestInit = { method: op.method, headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(`${server}${path}${query}`, init);
    const text = await response.text();
    const value = text === '' ? undefined : JSON.parse(text);
    const listed = String(response.status) in op.responses ? String(response.status) : response.status >= 400 ? 'default' : null;
    if (listed === null || !(listed in op.responses)) throw new SchemaMismatch(`${operationId} answered ${response.status}, which the document does not list`);
    const schema = op.responses[listed];
    if (schema) check(schema, value, `${operationId} ${response.status} response`);
    if (response.status >= 400) throw new Error(`${operationId}: ${response.status} ${text}`);
    return value;
  }
  return {
    list: async (q = {}) => {
      const search = new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();
      return (await call(`list_${collection}`, {}, undefined, search === '' ? '' : `?${search}`)) as R[];
    },
    create: async (input) => (await call(`create_${collection}`, {}, input)) as R,
    get: async (id) => (await call(`get_${collection}`, { id })) as R,
    replace: async (id, input) => (await call(`replace_${collection}`, { id }, input)) as R,
    update: async (id, patch) => (await call(`update_${collection}`, { id }, patch)) as R,
    remove: async (id) => {
      await call(`delete_${collection}`, { id });
    },
  };
}
