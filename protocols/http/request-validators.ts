import AjvCompiler from '@fastify/ajv-compiler';
import type { FastifyServerOptions } from 'fastify';
import { fastStringLength } from './string-length-keywords.js';

/**
 * ajv's options for every route's request schemas (fastify's `ajv` server option). Coercion
 * ('array': text to a number or boolean, one value to a one-element array) is what a query string
 * needs (`?limit=10` arrives as text, `?select=a` as one value of a list) and what path parameters
 * and headers need; request bodies are validated without it (requestValidators).
 */
export const ajvOptions = {
  customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
  // maxLength/minLength as ajv means them, counting code points only when the UTF-16 length
  // does not settle the answer (string-length-keywords.ts: a 25 KB SQL text was counted twice).
  plugins: [fastStringLength],
} satisfies FastifyServerOptions['ajv'];

type BuildValidator = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']>;
type CompilerOptions = Parameters<ReturnType<typeof AjvCompiler>>[1];
/** What fastify hands a validator compiler for each part of each route (the pool's compilers take it, despite their typing). */
interface RoutePart {
  readonly schema: unknown;
  readonly method: string;
  readonly url: string;
  readonly httpPart?: string;
}
type PartCompiler = (part: RoutePart) => unknown;

/**
 * fastify's validator compiler factory (`schemaController.compilersFactory.buildValidator`): the
 * same ajv as fastify's own (@fastify/ajv-compiler, the same options, plugins, formats and shared
 * schemas), in two instances: a request body is validated without coercion, every other part of a
 * request with it. A JSON body carries its own types, and a wrong one is the client's mistake to be
 * told of, as PostgREST and Pinecone refuse one (here 422 VALIDATION_ERROR): coerced, `{"sql": 5}` ran
 * the SQL text "5", `{"params": "x"}` bound ["x"] and `{"filter": true}` deleted every row.
 *
 * fastify lowercases the property names of a route's headers schema only for its own compiler
 * (headers arrive lowercased): with this one a headers schema must name them in lowercase, and a
 * route that does not fails when it is added, not by refusing every request.
 */
export function requestValidators(): BuildValidator {
  // One pool per server: an ajv instance per (shared schemas, options), as fastify's own factory keeps.
  const pool = AjvCompiler();
  const build = (externalSchemas: Record<string, unknown>, options: CompilerOptions): PartCompiler => {
    const coercing = pool(externalSchemas as Parameters<typeof pool>[0], options) as unknown as PartCompiler;
    const exact = pool(
      externalSchemas as Parameters<typeof pool>[0],
      {
        ...options,
        customOptions: { ...options?.customOptions, coerceTypes: false },
      } as CompilerOptions,
    ) as unknown as PartCompiler;
    return (part) => {
      if (part.httpPart === 'headers') refuseUppercaseHeaders(part);
      return part.httpPart === 'body' ? exact(part) : coercing(part);
    };
  };
  return build as unknown as BuildValidator;
}

function refuseUppercaseHeaders(part: RoutePart): void {
  const schema = part.schema as { properties?: Record<string, unknown>; required?: readonly string[] } | null;
  const names = [...Object.keys(schema?.properties ?? {}), ...(schema?.required ?? [])];
  const named = names.find((name) => name !== name.toLowerCase());
  if (named !== undefined)
    throw new Error(`${part.method} ${part.url}: the headers schema names "${named}": name headers in lowercase (request-validators.ts)`);
}
