import { POSTGRES_DIALECTS, type EngineResult, type SqlEngine } from './engine.js';

/**
 * svcdb over HTTP as a .slt engine, the way the public conformance runner talks to it:
 * POST {baseUrl}/api/v1/query {"sql", "include_metadata": true} with a bearer key; rows are read
 * from `data` in the order of `metadata.columns`. A non-2xx answer (the spec's envelope
 * {error: {code, message}}) or `success: false` is a statement error, reported as "CODE: message".
 */
export class SvcdbHttpEngine implements SqlEngine {
  readonly name = 'svcdb';
  readonly dialects: ReadonlySet<string> = new Set([...POSTGRES_DIALECTS, 'svcdb']);

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    private readonly requestTimeoutMs = 60_000,
  ) {}

  async execute(sql: string): Promise<EngineResult> {
    const response = await postQuery(this.baseUrl, this.apiKey, sql, this.requestTimeoutMs);
    if (response.kind === 'timeout') return { kind: 'error', message: `no answer within ${this.requestTimeoutMs} ms` };
    const { status, body, text } = response;
    const envelope = body as { success?: unknown; error?: { code?: unknown; message?: unknown }; data?: unknown; metadata?: { columns?: unknown } } | undefined;
    if (status < 200 || status > 299 || envelope === undefined || envelope.error || envelope.success === false) {
      const code = envelope?.error?.code;
      const message = typeof code === 'string' ? `${code}: ${String(envelope?.error?.message ?? '')}` : `HTTP ${status}: ${text.slice(0, 300)}`;
      return { kind: 'error', message };
    }
    const metaColumns = Array.isArray(envelope.metadata?.columns)
      ? (envelope.metadata.columns as { name?: unknown; type?: unknown }[]).map((c) => ({
          name: String(c.name),
          type: typeof c.type === 'string' ? c.type : '',
        }))
      : null;
    const data = Array.isArray(envelope.data) ? (envelope.data as unknown[]) : [];
    const rows = data.map((r): unknown[] => {
      if (Array.isArray(r)) return r;
      const obj = r as Record<string, unknown>;
      return metaColumns ? metaColumns.map((c) => obj[c.name]) : Object.values(obj);
    });
    const columns = metaColumns ?? (data[0] && !Array.isArray(data[0]) ? Object.keys(data[0]).map((name) => ({ name, type: '' })) : []);
    return { kind: 'rows', columns, rows };
  }

  async close(): Promise<void> {
    // Nothing held: each statement is one HTTP request (the server belongs to whoever started it).
  }
}

type PostResult = { kind: 'answer'; status: number; body: unknown; text: string } | { kind: 'timeout' };

async function postQuery(baseUrl: string, apiKey: string, sql: string, timeoutMs: number): Promise<PostResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey !== '') headers.authorization = `Bearer ${apiKey}`;
  let response: Response;
  try {
    response = await fetch(`${baseUrl}/api/v1/query`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ sql, include_metadata: true }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if ((error as { name?: string }).name === 'TimeoutError') return { kind: 'timeout' };
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new Error(`cannot reach svcdb at ${baseUrl}: ${cause}`, { cause: error });
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined; // not JSON: reported with the raw text by the caller
  }
  return { kind: 'answer', status: response.status, body, text };
}

/**
 * Fails loudly when POST /api/v1/query is missing (the router's own 404, NOT_FOUND "no route for
 * …"): a routing regression must fail the SQL suites, never skip them. Any other answer, an error
 * included, means the route exists.
 */
export async function requireQueryRoute(baseUrl: string, apiKey: string): Promise<void> {
  const response = await postQuery(baseUrl, apiKey, 'SELECT 1', 30_000);
  if (response.kind === 'timeout') return;
  const code = (response.body as { error?: { code?: unknown } } | undefined)?.error?.code;
  if (response.status === 404 && code === 'NOT_FOUND') {
    throw new Error(`POST ${baseUrl}/api/v1/query does not exist (404 NOT_FOUND: no route): the query route is missing from the server`);
  }
}
