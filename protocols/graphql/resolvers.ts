import type { GraphQLResolveInfo } from 'graphql';
import { aggregateList, aggregateObject, aggregateTerms, countKey, windowable } from './aggregate.js';
import { scopeOf, type RequestScope } from './context.js';
import { entityKey } from './entities.js';
import { loadAggregates, loadRows, relationKey, type ListArgs } from './loaders.js';
import type { ColumnModel, RelationModel, SchemaModel, TableModel } from './model.js';
import { compileOrderBy } from './order-by.js';
import { neededColumns, selectedFields, selectedUnder, selectList, subFields } from './selection.js';
import { SqlParams } from './sql-params.js';
import { DISTANCE_OPERATOR, type Metric } from '../vectors/vector-table.js';
import { compileWhere, type BoolExp } from './where.js';

type Row = Record<string, unknown>;
type Resolver = (parent: unknown, args: Record<string, unknown>, context: unknown, info: GraphQLResolveInfo) => unknown;

/** `SELECT … FROM t AS "t0" WHERE … [ORDER BY …] [LIMIT $n] [OFFSET $m]`: a list field, one statement. */
export function listSql(table: TableModel, columns: Parameters<typeof selectList>[0], args: ListArgs, params = new SqlParams()): string {
  const alias = params.alias();
  const where = compileWhere(table, alias, args.where, params);
  const order = compileOrderBy(table, alias, args.order_by, params);
  let sql = `SELECT ${selectList(columns, alias)} FROM ${table.sql} AS ${alias} WHERE ${where}`;
  if (order.length) sql += ` ORDER BY ${order.join(', ')}`;
  if (args.limit != null) sql += ` LIMIT ${params.add(args.limit)}`;
  if (args.offset != null) sql += ` OFFSET ${params.add(args.offset)}`;
  return sql;
}

async function rows(scope: RequestScope, sql: string, params: SqlParams): Promise<Row[]> {
  return (await scope.run(sql, params.values)).rows;
}

function listResolver(table: TableModel): Resolver {
  return (_parent, args, context, info) => {
    const params = new SqlParams();
    const sql = listSql(table, neededColumns(table, selectedFields(info)), args as ListArgs, params);
    return rows(scopeOf(context), sql, params);
  };
}

function byPkResolver(table: TableModel): Resolver {
  return async (_parent, args, context, info) => {
    const params = new SqlParams();
    const alias = params.alias();
    const where = table.primaryKey.map((c) => `${alias}.${c.sql} = ${params.add(args[c.field])}`).join(' AND ');
    const sql = `SELECT ${selectList(neededColumns(table, selectedFields(info)), alias)} FROM ${table.sql} AS ${alias} WHERE ${where}`;
    return (await rows(scopeOf(context), sql, params))[0] ?? null;
  };
}

/**
 * `<t>_aggregate`: one statement. Aggregates alone: a plain aggregate over the (paged) rows.
 * With nodes: the nodes carry the aggregates as window values (`… OVER ()`), so both come from
 * one statement; count(distinct) cannot be a window, and then the aggregates run as a second one.
 */
function aggregateResolver(table: TableModel): Resolver {
  return async (_parent, args, context, info) => {
    const scope = scopeOf(context);
    const terms = aggregateTerms(table, info, '"s"', selectedUnder(info, 'aggregate'));
    const termColumns = terms.flatMap((t) => t.columns);
    const nodeColumns = neededColumns(table, selectedUnder(info, 'nodes'));
    const wantsNodes = selectedFields(info).some((f) => f.name.value === 'nodes');
    const inner = (columns: readonly ColumnModel[], params: SqlParams) =>
      listSql(
        table,
        table.columns.filter((c) => columns.includes(c) || termColumns.includes(c)),
        args as ListArgs,
        params,
      );
    if (wantsNodes && windowable(terms)) {
      const params = new SqlParams();
      const list = terms.length ? `, ${aggregateList(terms, true)}` : '';
      const nodes = await rows(scope, `SELECT "s".*${list} FROM (${inner(nodeColumns, params)}) AS "s"`, params);
      return { aggregate: aggregateObject(terms, nodes[0]), nodes };
    }
    const params = new SqlParams();
    const sql = `SELECT ${terms.length ? aggregateList(terms, false) : 'count(*) AS "__a0"'} FROM (${inner(neededColumns(table, []), params)}) AS "s"`;
    const aggregate = aggregateObject(terms, (await rows(scope, sql, params))[0]);
    let nodes: Row[] = [];
    if (wantsNodes) {
      const nodeParams = new SqlParams();
      nodes = await rows(scope, inner(nodeColumns, nodeParams), nodeParams);
    }
    return { aggregate, nodes };
  };
}

function nearestResolver(table: TableModel): Resolver {
  return (_parent, args, context, info) => {
    const column = table.vectorColumns.find((c) => c.field === args.column) ?? table.vectorColumns[0]!;
    const index = table.def.indexes.find((i) => i.kind === 'hnsw' && i.columnIds[0] === column.def.id);
    const metric = (index?.options['metric'] as Metric | undefined) ?? 'l2';
    const params = new SqlParams();
    const alias = params.alias();
    const where = compileWhere(table, alias, args.where as BoolExp | undefined, params);
    const vector = params.add(args.vector);
    const sql = `SELECT ${selectList(neededColumns(table, selectedFields(info)), alias)} FROM ${table.sql} AS ${alias} WHERE ${where} ORDER BY ${alias}.${column.sql} ${DISTANCE_OPERATOR[metric]} ${vector} LIMIT ${params.add(args.k)}`;
    return rows(scopeOf(context), sql, params);
  };
}

/** Resolvers of a table type's relation fields: batched loads (loaders.ts), one statement per level. */
function relationResolvers(table: TableModel): Record<string, Resolver> {
  const out: Record<string, Resolver> = {};
  for (const relation of table.relations) {
    out[relation.field] = async (parent, args, context, info) => {
      const key = relationKey(relation, parent as Row);
      if (key === null) return relation.kind === 'object' ? null : [];
      const columns = neededColumns(relation.target, selectedFields(info));
      const name = `${table.base}.${relation.field}`;
      const found = await loadRows(scopeOf(context), {
        name,
        target: relation.target,
        to: relation.to,
        columns,
        args: relation.kind === 'object' ? {} : (args as ListArgs),
        key,
      });
      return relation.kind === 'object' ? (found[0] ?? null) : found;
    };
    if (relation.aggregateField) out[relation.aggregateField] = relationAggregateResolver(table, relation);
  }
  return out;
}

/** `<relation>_aggregate(where)` of a parent row: its children's aggregates (one GROUP BY per level) and nodes (one load per level). */
function relationAggregateResolver(table: TableModel, relation: RelationModel): Resolver {
  return async (parent, args, context, info) => {
    const terms = aggregateTerms(relation.target, info, '"s"', selectedUnder(info, 'aggregate'));
    const key = relationKey(relation, parent as Row);
    if (key === null) return { aggregate: aggregateObject(terms, undefined), nodes: [] };
    const scope = scopeOf(context);
    const name = `${table.base}.${relation.field}`;
    const where = args.where as BoolExp | undefined;
    const wantsNodes = selectedFields(info).some((f) => f.name.value === 'nodes');
    const [groups, nodes] = await Promise.all([
      terms.length ? loadAggregates(scope, { name, target: relation.target, to: relation.to, where, terms, key }) : Promise.resolve([]),
      wantsNodes
        ? loadRows(scope, {
            name,
            target: relation.target,
            to: relation.to,
            columns: neededColumns(relation.target, selectedUnder(info, 'nodes')),
            args: { where: where ?? null },
            key,
          })
        : Promise.resolve([]),
    ]);
    return { aggregate: aggregateObject(terms, groups[0]), nodes };
  };
}

/** Federation: `_entities` finds a table row by its @key (the primary key), batched like relations. */
function referenceResolver(table: TableModel): (reference: Row, args: unknown, context: unknown, info: GraphQLResolveInfo) => Promise<Row | null> {
  return async (reference, _args, context, info) => {
    const key = entityKey(table, reference, info);
    const fields = subFields(
      info.fieldNodes.map((n) => n.selectionSet),
      info.fragments,
    );
    const found = await loadRows(scopeOf(context), {
      name: `${table.base}.__entity`,
      target: table,
      to: table.primaryKey,
      columns: neededColumns(table, fields),
      args: {},
      key,
    });
    return found[0] ?? null;
  };
}

/** The query resolvers of a tenant schema, by type then field (mercurius's resolvers map). */
export function queryResolvers(model: SchemaModel): Record<string, Record<string, unknown>> {
  const query: Record<string, unknown> = {};
  const out: Record<string, Record<string, unknown>> = { Query: query };
  if (model.tables.length === 0) query._tables_count = () => 0;
  for (const table of model.tables) {
    const b = table.base;
    query[b] = listResolver(table);
    query[`${b}_aggregate`] = aggregateResolver(table);
    if (table.primaryKey.length) query[`${b}_by_pk`] = byPkResolver(table);
    if (table.vectorColumns.length) query[`${b}_nearest`] = nearestResolver(table);
    const own: Record<string, unknown> = relationResolvers(table);
    if (table.primaryKey.length) own.__resolveReference = referenceResolver(table);
    if (Object.keys(own).length) out[b] = own;
    out[`${b}_aggregate_fields`] = { count: (parent: Row, args: Record<string, unknown>) => parent[countKey(args)] ?? 0 };
  }
  return out;
}
