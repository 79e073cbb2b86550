import { SvcError } from '../../core/errors.js';
import { MALFORMED_REQUEST_CODE } from '../errors.js';

/**
 * The interface spec names the vector protocol's fields in snake_case (top_k, include_values,
 * sparse_values, ...); Pinecone's clients send camelCase (topK, includeValues, sparseValues).
 * Both are accepted. When a body carries both names of one field they must agree: different
 * values are 400 (which one the client meant cannot be known), equal ones are the one value.
 */
export function aliased<T>(body: Readonly<Record<string, unknown>> | undefined, camel: string, snake: string, path = ''): T | undefined {
  const a = body?.[camel];
  const b = body?.[snake];
  if (a !== undefined && b !== undefined && canonical(a) !== canonical(b)) throw conflicting(`${path}${camel}`, `${path}${snake}`);
  return (a ?? b) as T | undefined;
}

/** 400 for two fields of one body that say different things. */
export function conflicting(first: string, second: string, why = 'they are two names of one field'): SvcError {
  return new SvcError(MALFORMED_REQUEST_CODE, `${first} and ${second} have different values (${why}): send one of them`, {
    reason: 'conflicting_fields',
    fields: [first, second],
  });
}

/** JSON text with object keys sorted, to compare two values whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
