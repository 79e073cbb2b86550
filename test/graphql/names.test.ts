import { describe, expect, it } from 'vitest';
import { buildSchemaModel, graphqlNameOf, isGraphqlName } from '../../protocols/graphql/index.js';
import { buildTenantSchema } from '../../protocols/graphql/schema-cache.js';
import type { TableDef } from '../../core/catalog.js';

const table = (id: number, name: string, columns: string[], extra: Partial<TableDef> = {}): TableDef => ({
  id,
  tenant: 't',
  schema: 'public',
  name,
  kind: 'table',
  columns: columns.map((c, i) => ({ id: i + 1, name: c, type: { name: 'int4' }, nullable: true, defaultExpr: null, missingValue: null, sequence: null })),
  primaryKey: [1],
  indexes: [],
  constraints: [],
  viewSql: null,
  createdAtMicros: 0n,
  updatedAtMicros: 0n,
  ...extra,
});

describe('GraphQL naming rule', () => {
  it('maps any SQL name to a valid GraphQL name', () => {
    const cases: [string, string][] = [
      ['books', 'books'],
      ['my-table', 'my_table'],
      ['1st', 'x1st'],
      ['__x', 'x__x'],
      ['', 'x'],
      ['héllo wörld', 'h_llo_w_rld'],
      ['a.b', 'a_b'],
      ['_ok', '_ok'],
    ];
    for (const [sql, graphql] of cases) {
      expect(graphqlNameOf(sql), sql).toBe(graphql);
      expect(isGraphqlName(graphqlNameOf(sql)), sql).toBe(true);
    }
  });

  it('resolves collisions with _2, _3 and reserves built-in and derived names', () => {
    const model = buildSchemaModel('t', [
      table(1, 'a-b', ['x']),
      table(2, 'a_b', ['x']),
      table(3, 'a b', ['x']),
      table(4, 'Query', ['x']),
      table(5, 'a_b_by_pk', ['x']),
    ]);
    expect(model.tables.map((t) => t.base)).toEqual(['a_b', 'a_b_2', 'a_b_3', 'Query_2', 'a_b_by_pk_2']);
  });

  it('builds a schema from hostile names without failing', async () => {
    const names = [
      '__typename',
      'true',
      'null',
      '1',
      '-',
      '_and',
      '_or',
      'id',
      'ID',
      'Int',
      'query',
      'mutation',
      'x'.repeat(128),
      '"quoted"',
      "it's",
      'ünï',
      '🙂',
    ];
    const defs = names.map((n, i) => table(i + 1, n, names));
    const schema = await buildTenantSchema(
      't',
      defs,
      {
        graphqlDepthMax: 10,
        graphqlComplexityMax: 1000,
        graphqlBatchOperationsMax: 10,
        graphqlSchemaCacheEntriesMax: 10,
        graphqlGraphiql: false,
        graphqlIntrospection: true,
        resultRowsMax: 10,
        queryTimeoutMsMax: 1000,
        queryTextBytesMax: 1000,
      },
      {},
    );
    expect(schema.model.tables).toHaveLength(names.length);
    await schema.app.close();
  });
});
