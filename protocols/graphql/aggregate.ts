import type { FieldNode } from 'graphql';
import { valueFromASTUntyped } from './graphql-lib.js';
import type { ColumnModel, TableModel } from './model.js';
import { quoteIdent } from './names.js';
import { subFields, type SelectionInfo } from './selection.js';

/** One aggregate the query asked for, and the output key its value comes back under. */
interface AggregateTerm {
  readonly sql: string;
  readonly key: string;
  /** Columns it reads (the inner SELECT must carry them). */
  readonly columns: readonly ColumnModel[];
}

/** The count(columns, distinct) variant of a count field: its key in the aggregate object. */
export const countKey = (args: { columns?: readonly string[] | null; distinct?: boolean | null }): string =>
  `count:${(args.columns ?? []).join(',')}:${args.distinct ? 'd' : ''}`;

function countTerm(table: TableModel, source: string, field: FieldNode, variables: Record<string, unknown>): AggregateTerm {
  const args: Record<string, unknown> = {};
  for (const a of field.arguments ?? []) args[a.name.value] = valueFromASTUntyped(a.value, variables);
  const columns = ((args.columns as string[] | null | undefined) ?? []).map((f) => table.columnByField.get(f)).filter((c) => c !== undefined);
  const distinct = args.distinct === true;
  const key = countKey({ columns: columns.map((c) => c.field), distinct });
  // Rows of a table are distinct already (a primary key or a hidden row id): DISTINCT * is count(*).
  if (columns.length === 0) return { sql: 'count(*)', key, columns };
  // count(DISTINCT a, b) is not SQL; several columns count rows where all are non-null (Hasura's reading).
  if (columns.length === 1) return { sql: `count(${distinct ? 'DISTINCT ' : ''}${source}.${quoteIdent(columns[0]!.field)})`, key, columns };
  return { sql: `count(CASE WHEN ${columns.map((c) => `${source}.${quoteIdent(c.field)} IS NOT NULL`).join(' AND ')} THEN 1 END)`, key, columns };
}

/**
 * The aggregates selected under `aggregate { … }` of an `<table>_aggregate` field, over the rows
 * of a subquery `source` whose columns are named by their GraphQL fields.
 */
export function aggregateTerms(
  table: TableModel,
  info: SelectionInfo & { variableValues: Record<string, unknown> },
  source: string,
  fields: readonly FieldNode[],
): AggregateTerm[] {
  const terms = new Map<string, AggregateTerm>();
  for (const field of fields) {
    const name = field.name.value;
    if (name === 'count') {
      const term = countTerm(table, source, field, info.variableValues);
      terms.set(term.key, term);
    } else if (name === 'sum' || name === 'avg' || name === 'min' || name === 'max') {
      for (const sub of subFields([field.selectionSet], info.fragments)) {
        const column = table.columnByField.get(sub.name.value);
        if (column)
          terms.set(`${name}.${column.field}`, { sql: `${name}(${source}.${quoteIdent(column.field)})`, key: `${name}.${column.field}`, columns: [column] });
      }
    }
  }
  return [...terms.values()];
}

/** `agg AS "__a0", …` for a SELECT list. */
export const aggregateList = (terms: readonly AggregateTerm[], window: boolean): string =>
  terms.map((t, i) => `${t.sql}${window ? ' OVER ()' : ''} AS ${quoteIdent(`__a${i}`)}`).join(', ');

/** The `aggregate` object of a result: counts by countKey, sum/avg/min/max objects by column field. */
export function aggregateObject(terms: readonly AggregateTerm[], row: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { sum: {}, avg: {}, min: {}, max: {} };
  terms.forEach((term, i) => {
    const value = row === undefined ? (term.key.startsWith('count:') ? 0 : null) : row[`__a${i}`];
    const dot = term.key.indexOf('.');
    if (term.key.startsWith('count:')) out[term.key] = value ?? 0;
    else (out[term.key.slice(0, dot)] as Record<string, unknown>)[term.key.slice(dot + 1)] = value;
  });
  return out;
}

/** Whether a window aggregate can stand for this term (DISTINCT is not allowed in a window). */
export const windowable = (terms: readonly AggregateTerm[]): boolean => terms.every((t) => !t.sql.includes('DISTINCT'));
