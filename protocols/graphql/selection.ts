import type { FieldNode, FragmentDefinitionNode, SelectionSetNode } from 'graphql';
import { Kind } from './graphql-lib.js';
import type { ColumnModel, TableModel } from './model.js';
import { quoteIdent } from './names.js';

/** What a resolver needs of its GraphQL info (graphql-js and graphql-jit both give this). */
export interface SelectionInfo {
  readonly fieldNodes: readonly FieldNode[];
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
}

/** The field nodes under a selection set, fragments flattened (directives are not evaluated: a superset is fine). */
export function subFields(selections: readonly (SelectionSetNode | undefined)[], fragments: SelectionInfo['fragments']): FieldNode[] {
  const out: FieldNode[] = [];
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>): void => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) out.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet, seen);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        visit(fragments[selection.name.value]?.selectionSet, seen);
      }
    }
  };
  for (const set of selections) visit(set, new Set());
  return out;
}

/** The fields selected under this resolver's field (all its field nodes merged). */
export function selectedFields(info: SelectionInfo): FieldNode[] {
  return subFields(
    info.fieldNodes.map((n) => n.selectionSet),
    info.fragments,
  );
}

/** The fields selected under a child field (e.g. `nodes` of an aggregate) of this resolver's field. */
export function selectedUnder(info: SelectionInfo, child: string): FieldNode[] {
  const nodes = selectedFields(info).filter((f) => f.name.value === child);
  return subFields(
    nodes.map((n) => n.selectionSet),
    info.fragments,
  );
}

/**
 * The columns a row of `table` must carry for these selected fields: the columns asked for, the
 * join columns of the relations asked for, and the primary key (federation and loaders use it).
 */
export function neededColumns(table: TableModel, fields: readonly FieldNode[]): ColumnModel[] {
  const needed = new Set<ColumnModel>(table.primaryKey);
  for (const field of fields) {
    const name = field.name.value;
    const column = table.columnByField.get(name);
    if (column) needed.add(column);
    const relation = table.relationByField.get(name);
    if (relation) for (const c of relation.from) needed.add(c);
  }
  // A table without a primary key and nothing selected (only __typename) still needs one column.
  if (needed.size === 0) needed.add(table.columns[0]!);
  return table.columns.filter((c) => needed.has(c));
}

/** `alias."col" AS "field"`, …: rows come back keyed by GraphQL field names, so the default resolvers read them. */
export function selectList(columns: readonly ColumnModel[], alias: string): string {
  return columns.map((c) => `${alias}.${c.sql} AS ${quoteIdent(c.field)}`).join(', ');
}
