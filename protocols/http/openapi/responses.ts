/**
 * Success bodies of the main /api/v1 operations, for the OpenAPI document only: fastify serializes
 * these routes with JSON.stringify, as before, and test/protocols/openapi checks real answers
 * against these schemas so the document cannot drift from what the server sends.
 */
type Schema = Record<string, unknown>;

const timestamp: Schema = { type: 'string', format: 'date-time' };
const row: Schema = {
  type: 'object',
  additionalProperties: true,
  description: 'A row: column name → value (BIGINT and NUMERIC as JSON numbers when exact, else strings; see docs/sql-types.md)',
};
const column: Schema = {
  type: 'object',
  required: ['name', 'type', 'nullable'],
  properties: { name: { type: 'string' }, type: { type: 'string' }, nullable: { type: 'boolean' } },
};

const queryResult: Schema = {
  type: 'object',
  required: ['success', 'data'],
  properties: {
    success: { type: 'boolean' },
    data: { type: 'array', items: row },
    metadata: {
      type: 'object',
      required: ['columns', 'row_count', 'execution_time_ms', 'query_id'],
      properties: {
        columns: { type: 'array', items: column },
        row_count: { type: 'integer' },
        execution_time_ms: { type: 'number' },
        query_id: { type: 'string' },
        command: { type: 'string' },
        affected_rows: { type: ['integer', 'null'] },
        truncated: { type: 'boolean' },
      },
    },
  },
};

const tableSummary: Schema = {
  type: 'object',
  required: ['name', 'schema', 'type', 'row_count', 'size_bytes', 'created_at', 'updated_at'],
  properties: {
    name: { type: 'string' },
    schema: { type: 'string' },
    type: { type: 'string', enum: ['table', 'materialized_view', 'view'] },
    row_count: { type: 'integer' },
    size_bytes: { type: 'integer' },
    created_at: timestamp,
    updated_at: timestamp,
  },
};

const tableSchema: Schema = {
  type: 'object',
  required: ['name', 'schema', 'type', 'columns', 'indexes', 'constraints', 'statistics'],
  properties: {
    name: { type: 'string' },
    schema: { type: 'string' },
    type: { type: 'string' },
    columns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'type', 'nullable', 'default', 'is_primary_key'],
        properties: { name: { type: 'string' }, type: { type: 'string' }, nullable: { type: 'boolean' }, default: {}, is_primary_key: { type: 'boolean' } },
      },
    },
    indexes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'type', 'columns', 'unique'],
        properties: { name: { type: 'string' }, type: { type: 'string' }, columns: { type: 'array', items: { type: 'string' } }, unique: { type: 'boolean' } },
      },
    },
    constraints: {
      type: 'array',
      items: { type: 'object', required: ['name', 'type'], properties: { name: { type: 'string' }, type: { type: 'string' }, definition: { type: 'string' } } },
    },
    statistics: {
      type: 'object',
      required: ['row_count', 'size_bytes', 'index_size_bytes'],
      properties: {
        row_count: { type: 'integer' },
        size_bytes: { type: 'integer' },
        index_size_bytes: { type: 'integer' },
        last_analyzed: { type: ['string', 'null'] },
      },
    },
  },
};

const transaction: Schema = {
  type: 'object',
  required: ['transaction_id', 'isolation_level', 'status'],
  properties: {
    transaction_id: { type: 'string', format: 'uuid' },
    isolation_level: { type: 'string', enum: ['read_committed', 'repeatable_read', 'serializable'] },
    read_only: { type: 'boolean' },
    status: { type: 'string' },
    started_at: timestamp,
    expires_at: timestamp,
  },
};

/** Documented success responses by `METHOD url` (fastify's url, with :params). */
export const SUCCESS_RESPONSES: Readonly<Record<string, Readonly<Record<string, Schema>>>> = {
  'POST /api/v1/query': { '200': queryResult },
  'POST /api/v1/transactions/:transaction_id/query': { '200': queryResult },
  'GET /api/v1/tables': {
    '200': {
      type: 'object',
      required: ['tables', 'total_count'],
      properties: { tables: { type: 'array', items: tableSummary }, total_count: { type: 'integer' } },
    },
  },
  'GET /api/v1/tables/:table_name': { '200': tableSchema },
  'POST /api/v1/tables': {
    '201': {
      type: 'object',
      required: ['success', 'table'],
      properties: {
        success: { type: 'boolean' },
        created: { type: 'boolean' },
        table: { type: 'object', required: ['name', 'schema'], properties: { name: { type: 'string' }, schema: { type: 'string' }, created_at: timestamp } },
      },
    },
  },
  'GET /api/v1/tables/:table_name/rows': {
    '200': {
      type: 'object',
      required: ['data', 'pagination'],
      properties: {
        data: { type: 'array', items: row },
        pagination: {
          type: 'object',
          required: ['limit', 'has_more'],
          properties: {
            limit: { type: 'integer' },
            offset: { type: 'integer' },
            total_count: { type: ['integer', 'null'] },
            has_more: { type: 'boolean' },
            next_cursor: { type: ['string', 'null'] },
            prev_cursor: { type: ['string', 'null'] },
          },
        },
      },
    },
  },
  'POST /api/v1/tables/:table_name/rows': {
    '201': {
      type: 'object',
      required: ['success', 'inserted_count'],
      properties: { success: { type: 'boolean' }, inserted_count: { type: 'integer' }, data: { type: 'array', items: row } },
    },
  },
  'GET /api/v1/tables/:table_name/rows/:id': { '200': { type: 'object', required: ['data'], properties: { data: row } } },
  'DELETE /api/v1/tables/:table_name/rows/:id': {
    '200': { type: 'object', required: ['success'], properties: { success: { type: 'boolean' }, deleted: { type: 'boolean' } } },
  },
  'POST /api/v1/transactions': { '201': transaction },
  'GET /api/v1/transactions/:transaction_id': { '200': transaction },
  'POST /api/v1/transactions/:transaction_id/commit': {
    '200': {
      type: 'object',
      required: ['success', 'transaction_id', 'status', 'committed_at'],
      properties: {
        success: { type: 'boolean' },
        transaction_id: { type: 'string' },
        status: { type: 'string', enum: ['committed'] },
        committed_at: timestamp,
        lsn: { type: 'integer' },
      },
    },
  },
  'POST /api/v1/transactions/:transaction_id/rollback': {
    '200': {
      type: 'object',
      required: ['success', 'transaction_id', 'status', 'rolled_back_at'],
      properties: {
        success: { type: 'boolean' },
        transaction_id: { type: 'string' },
        status: { type: 'string', enum: ['rolled_back'] },
        rolled_back_at: timestamp,
      },
    },
  },
  'POST /api/v1/query/async': {
    '202': {
      type: 'object',
      required: ['query_id', 'status', 'status_url'],
      properties: { query_id: { type: 'string' }, status: { type: 'string' }, status_url: { type: 'string' }, estimated_time_ms: { type: 'integer' } },
    },
  },
};
