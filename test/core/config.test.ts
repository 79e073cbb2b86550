import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../core/config.js';

/** The CONFIG_INVALID error resolveConfig throws for these sources. */
function refusal(sources: Parameters<typeof resolveConfig>[0]): { code: string; message: string; details: Record<string, unknown> } {
  try {
    resolveConfig(sources);
  } catch (error) {
    return error as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected the config to be refused');
}

describe('core/config relations between limits', () => {
  it('accepts the defaults and bounds that are equal', () => {
    expect(() => resolveConfig({})).not.toThrow();
    expect(() => resolveConfig({ env: { SVC_HEADERS_TIMEOUT_MS: '2000', SVC_REQUEST_TIMEOUT_MS: '2000' } })).not.toThrow();
  });

  it.each([
    [{ SVC_HEADERS_TIMEOUT_MS: '3000', SVC_REQUEST_TIMEOUT_MS: '2000' }, 'headersTimeoutMs', 'requestTimeoutMs'],
    [{ SVC_TRANSACTION_TIMEOUT_MS_DEFAULT: '60000', SVC_TRANSACTION_TIMEOUT_MS_MAX: '10000' }, 'transactionTimeoutMsDefault', 'transactionTimeoutMsMax'],
    [{ SVC_ASYNC_QUERY_CONCURRENCY_MAX: '8', SVC_ASYNC_QUERIES_MAX: '4' }, 'asyncQueryConcurrencyMax', 'asyncQueriesMax'],
  ])('refuses %o: %s above %s', (env, smaller, larger) => {
    const error = refusal({ env });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(`${smaller} (`);
    expect(error.message).toContain(`larger than ${larger}`);
    expect(error.details).toEqual({ setting: smaller });
  });
});

describe('core/config keys of earlier versions', () => {
  it('refuses a renamed key, naming its new name; the environment variable keeps the spec name', () => {
    const error = refusal({ file: { maxResultRows: 10 }, filePath: '/etc/svcdb.json' });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('unknown key "maxResultRows"');
    expect(error.message).toContain('"resultRowsMax"');
    expect(resolveConfig({ file: { resultRowsMax: 10 } }).resultRowsMax).toBe(10);
    expect(resolveConfig({ env: { SVC_MAX_RESULT_ROWS: '11' } }).resultRowsMax).toBe(11);
  });
});
