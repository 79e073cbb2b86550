import type { TestServer } from '../helpers/sql-server.js';

/** A GraphQL answer: HTTP status, content type, and the parsed body. */
export interface GqlReply {
  readonly status: number;
  readonly type: string;
  readonly body: any;
}

/** POST /graphql with the admin key (or `headers`), as a client would send it. */
export async function gql(server: TestServer, query: unknown, variables?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<GqlReply> {
  const body = typeof query === 'string' ? { query, ...(variables ? { variables } : {}) } : query;
  const response = await fetch(`${server.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}`, ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: text === '' ? undefined : JSON.parse(text) };
}

/** The data of a query that must succeed (throws with the errors otherwise). */
export async function data(server: TestServer, query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<any> {
  const reply = await gql(server, query, variables, headers);
  if (reply.status !== 200 || reply.body.errors) throw new Error(`GraphQL failed (${reply.status}): ${JSON.stringify(reply.body)}`);
  return reply.body.data;
}

/** Runs SQL in process as the admin of a tenant. */
export async function sql(server: TestServer, text: string, tenant = 'default'): Promise<void> {
  await server.sql.execute(text, { params: [], timeoutMs: 10_000, maxRows: 10_000, tenant });
}

/** Counts the SQL statements the server's engine runs while `work` runs (the engine's own method, wrapped). */
export async function countStatements<T>(server: TestServer, work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const engine = server.sql as unknown as { execute: (...args: unknown[]) => Promise<unknown> };
  const original = engine.execute;
  const statements: string[] = [];
  engine.execute = function (this: unknown, ...args: unknown[]) {
    statements.push(String(args[0]));
    return original.apply(this, args);
  };
  try {
    return { result: await work(), statements };
  } finally {
    engine.execute = original;
  }
}
