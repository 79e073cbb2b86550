import { describe, expect, it } from 'vitest';
import { ERROR_CODES, SvcError } from '../../core/errors.js';
import { HTTP_STATUS_BY_CODE, errorBody, errorEnvelope, toSvcError, wireDetails } from '../../protocols/errors.js';
import { vectorEnvelope } from '../../protocols/pinecone/errors.js';

const context = { bodyLimitBytes: 1024 };

describe('error table and translation', () => {
  it('maps exactly the codes of core/errors.ts to 4xx/5xx statuses', () => {
    expect(Object.keys(HTTP_STATUS_BY_CODE).sort()).toEqual([...ERROR_CODES].sort());
    for (const status of Object.values(HTTP_STATUS_BY_CODE)) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });

  it('keeps the statuses the spec fixes', () => {
    expect(HTTP_STATUS_BY_CODE).toMatchObject({
      AUTHENTICATION_REQUIRED: 401,
      AUTHENTICATION_FAILED: 401,
      AUTHORIZATION_DENIED: 403,
      INVALID_QUERY: 400,
      TABLE_NOT_FOUND: 404,
      CONSTRAINT_VIOLATION: 409,
      TRANSACTION_CONFLICT: 409,
      RATE_LIMIT_EXCEEDED: 429,
      INTERNAL_ERROR: 500,
    });
  });

  it('passes a SvcError through untouched', () => {
    const error = new SvcError('TYPE_MISMATCH', 'x', { column: 'a' });
    expect(toSvcError(error, context)).toBe(error);
  });

  it('hides the message of unknown errors and non-errors', () => {
    for (const thrown of [new Error('ENOENT /secret/path'), 'a string', { code: 'X' }, undefined, new TypeError('x is undefined')]) {
      const error = toSvcError(thrown, context);
      expect(error.code).toBe('INTERNAL_ERROR');
      expect(error.message).not.toContain('secret');
    }
  });

  it('maps fastify client errors by status and server errors to INTERNAL_ERROR', () => {
    const withStatus = (statusCode: number, code = 'FST_ERR_OTHER') => Object.assign(new Error('m'), { statusCode, code });
    expect(toSvcError(withStatus(404), context).code).toBe('NOT_FOUND');
    expect(toSvcError(withStatus(429), context).code).toBe('RATE_LIMIT_EXCEEDED');
    expect(toSvcError(withStatus(405), context).code).toBe('INVALID_QUERY');
    expect(toSvcError(withStatus(500), context).code).toBe('INTERNAL_ERROR');
  });

  it('builds the envelope', () => {
    expect(errorEnvelope(new SvcError('NOT_FOUND', 'gone', { id: 1 }), 'r1')).toEqual({
      error: { code: 'NOT_FOUND', message: 'gone', details: { id: 1 }, request_id: 'r1' },
    });
  });

  it('sends details keys in snake_case, top level only, snake_case ones as they are', () => {
    expect(wireDetails({ limitBytes: 1, dataDir: '/d', positionBytes: 3, table_id: 4, reset_at: 'x', HTTPStatus: 5 })).toEqual({
      limit_bytes: 1,
      data_dir: '/d',
      position_bytes: 3,
      table_id: 4,
      reset_at: 'x',
      http_status: 5,
    });
    const nested = { columns: { myColumn: 1 } };
    expect(wireDetails(nested)).toBe(nested);
    expect(errorBody(new SvcError('TYPE_MISMATCH', 'm', { columnId: 77, type: 'INTEGER' }))).toEqual({
      code: 'TYPE_MISMATCH',
      message: 'm',
      details: { column_id: 77, type: 'INTEGER' },
    });
    expect(errorEnvelope(new SvcError('NOT_FOUND', 'gone', { tableId: 1 }), 'r1').error.details).toEqual({ table_id: 1 });
  });

  it("builds the vector protocol's envelope: svcdb's plus Pinecone's status and message", () => {
    expect(vectorEnvelope(new SvcError('NOT_FOUND', 'Resource x not found', { indexName: 'x' }), { requestId: 'r2', status: 404 })).toEqual({
      error: { code: 'NOT_FOUND', message: 'Resource x not found', details: { index_name: 'x' }, request_id: 'r2' },
      status: 404,
      message: 'Resource x not found',
    });
  });
});
