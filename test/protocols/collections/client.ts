/** Requests to the collection interface (/v1) of a test server. */

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** A request to `${baseUrl}/v1${path}` with a JSON body (a string body is sent as is). */
export async function v1(
  baseUrl: string,
  path: string,
  options: { method?: string; key?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(options.key === undefined ? {} : { 'x-api-key': options.key }), ...options.headers };
  const init: RequestInit = { method: options.method ?? (options.body === undefined ? 'GET' : 'POST'), headers };
  if (options.body !== undefined) {
    init.body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${baseUrl}/v1${path}`, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** The collection error body: code, message, details at the top level. */
export function expectError(answer: Answer, status: number, code: string): void {
  if (answer.status !== status || answer.body?.code !== code || typeof answer.body?.message !== 'string' || typeof answer.body?.details !== 'object') {
    throw new Error(`expected ${status} ${code}, got ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
