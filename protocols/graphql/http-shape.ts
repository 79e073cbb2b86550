import { parseAccept } from '../http/content-negotiation.js';

/** The GraphQL-over-HTTP media types. */
export const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';
export const JSON_TYPE = 'application/json';

/** One operation of a request (GET parameters or a POST body, or one element of a batch). */
export interface GraphqlOperation {
  readonly query: string;
  readonly variables?: Record<string, unknown> | null;
  readonly operationName?: string | null;
  readonly extensions?: Record<string, unknown> | null;
}

/**
 * The response type for an Accept header (GraphQL over HTTP): application/graphql-response+json
 * when the client prefers it, application/json otherwise (also without Accept, as legacy clients
 * expect); null when the client accepts neither (406).
 */
export function responseTypeOf(accept: string | undefined): string | null {
  if (accept === undefined || accept.trim() === '') return JSON_TYPE;
  const ranges = parseAccept(accept);
  const match = (type: string, subtype: string): { specificity: number; q: number } => {
    let best = { specificity: -1, q: 0 };
    for (const r of ranges) {
      const s = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
      if (s > best.specificity) best = { specificity: s, q: r.q };
    }
    return best;
  };
  const modern = match('application', 'graphql-response+json');
  const legacy = match('application', 'json');
  // Named explicitly, the new type wins a tie; reached only through a wildcard (`*/*`), JSON does.
  if (modern.q > 0 && modern.specificity === 2 && modern.q >= legacy.q) return GRAPHQL_RESPONSE_JSON;
  if (legacy.q > 0) return JSON_TYPE;
  return modern.q > 0 ? GRAPHQL_RESPONSE_JSON : null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A request's operation checked for shape; a string says what is wrong (a 400). */
export function operationOf(raw: unknown): GraphqlOperation | string {
  if (!isObject(raw)) return 'the request must be a JSON object with a "query" string';
  const { query, variables, operationName, extensions } = raw;
  if (typeof query !== 'string' || query.trim() === '') return 'the "query" parameter must be a non-empty string';
  if (variables !== undefined && variables !== null && !isObject(variables)) return 'the "variables" parameter must be an object';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return 'the "operationName" parameter must be a string';
  if (extensions !== undefined && extensions !== null && !isObject(extensions)) return 'the "extensions" parameter must be an object';
  return {
    query,
    variables: (variables as Record<string, unknown> | null | undefined) ?? null,
    operationName: (operationName as string | null | undefined) ?? null,
  };
}

/** GET parameters: variables and extensions are JSON text. */
export function getOperationOf(params: Record<string, unknown>): GraphqlOperation | string {
  const parsed: Record<string, unknown> = { ...params };
  for (const key of ['variables', 'extensions']) {
    const value = params[key];
    if (typeof value !== 'string' || value === '') {
      delete parsed[key];
      continue;
    }
    try {
      parsed[key] = JSON.parse(value);
    } catch {
      return `the "${key}" parameter is not valid JSON`;
    }
  }
  return operationOf(parsed);
}
