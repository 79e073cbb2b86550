import { plainCall, type ColumnRef, type FuncCall, type SqlExpr } from '../parse/index.js';
import { invalid } from './context.js';
import type { RangeEntry, Scope } from './scope.js';

/**
 * The functions that take a whole row of a FROM item as their first argument (`to_jsonb(o)`,
 * `row_to_json(o.*)`, `json_agg(o ORDER BY o.id)`): the JSON object of its columns, named as the
 * item shows them. svcdb has no record values, so a whole-row reference is bound only here, as
 * jsonb_build_object('c1', o.c1, …) (row_to_json becomes to_jsonb; the json_* names are the jsonb
 * functions, docs/sql.md); anywhere else `o` stays an unknown column, as before.
 *
 * A function in FROM that returns a scalar (generate_series, unnest of one array,
 * jsonb_array_elements, …: one column, no ORDINALITY) is different: PostgreSQL's whole row of it
 * is that scalar, not a one-key object (`to_jsonb(g) FROM generate_series(1, 2) AS g(n)` is 1, 2),
 * so the reference is bound as its one column, here and as a bare value.
 */
const ROW_FUNCTIONS = new Set(['to_jsonb', 'to_json', 'row_to_json', 'jsonb_agg', 'json_agg']);

/** `node` with a whole-row first argument replaced by the object of the row's columns; `node` itself otherwise. */
export function withWholeRow(node: FuncCall, scope: Scope): FuncCall {
  const { schema, name } = node.name;
  if ((schema !== null && schema !== 'pg_catalog') || !ROW_FUNCTIONS.has(name) || node.args.length === 0) return node;
  const found = wholeRowEntry(node.args[0]!, scope);
  if (found === null) return node;
  if (name === 'row_to_json' && node.args.length > 1) throw invalid('row_to_json with pretty_bool is not supported', { reason: 'unsupported' });
  if (SCALAR_FUNCTION_ITEMS.has(found.entry)) {
    // The scalar itself; row_to_json of it is PostgreSQL's "function row_to_json(integer) does not exist".
    return { ...node, args: [columnOf(found.entry, node.args[0]!.loc), ...node.args.slice(1)] };
  }
  const row = rowObject(found.entry, found.nullable, node.args[0]!.loc);
  return { ...node, name: { ...node.name, name: name === 'row_to_json' ? 'to_jsonb' : name }, args: [row, ...node.args.slice(1)] };
}

/** FROM items that are one function returning a scalar (table-function.ts marks them). */
const SCALAR_FUNCTION_ITEMS = new WeakSet<RangeEntry>();

/** Marks `entry` as a function item whose whole row is its one column's scalar. */
export function markScalarFunctionItem(entry: RangeEntry): void {
  SCALAR_FUNCTION_ITEMS.add(entry);
}

function columnOf(entry: RangeEntry, loc: number): ColumnRef {
  return { kind: 'column_ref', qualifier: [entry.alias], column: entry.columns[0]!.name, loc };
}

/**
 * A bare name that is no column but the alias of a scalar function item: its column, as
 * PostgreSQL reads `SELECT g FROM generate_series(1, 2) AS g(n)`; null for any other name.
 */
export function scalarWholeRow(name: string, scope: Scope, loc: number): ColumnRef | null {
  for (let s: Scope | null = scope; s; s = s.parent) {
    const entry = s.entries.find((e) => e.alias === name);
    if (entry) return SCALAR_FUNCTION_ITEMS.has(entry) ? columnOf(entry, loc) : null;
  }
  return null;
}

/**
 * The FROM item `arg` names as a whole row: `o.*`, or a bare `o` that is no column of this or an
 * enclosing query (PostgreSQL's rule: a column of that name wins) but is a FROM item's alias.
 */
function wholeRowEntry(arg: SqlExpr, scope: Scope): { entry: RangeEntry; nullable: boolean } | null {
  if (arg.kind !== 'column_ref') return null;
  let alias: string;
  if (arg.column === null && arg.qualifier.length > 0) alias = arg.qualifier[arg.qualifier.length - 1]!;
  else if (arg.column !== null && arg.qualifier.length === 0) {
    for (let s: Scope | null = scope; s; s = s.parent) if (s.lookup(null, arg.column)) return null;
    alias = arg.column;
  } else return null;
  for (let s: Scope | null = scope; s; s = s.parent) {
    const entry = s.entries.find((e) => e.alias === alias);
    if (entry) return { entry, nullable: s.nullableAliases.has(alias) };
  }
  return null;
}

/**
 * jsonb_build_object('c1', alias.c1, …) over the item's columns in order. On the nullable side of
 * an outer join PostgreSQL's whole row is NULL where the join found no row (not an object of
 * NULLs): a column that is never NULL in a real row (a primary key) tells the two apart.
 */
function rowObject(entry: RangeEntry, nullable: boolean, loc: number): SqlExpr {
  const ref = (column: string): SqlExpr => ({ kind: 'column_ref', qualifier: [entry.alias], column, loc });
  const args: SqlExpr[] = entry.columns.flatMap((c) => [{ kind: 'string', value: c.name, loc } as SqlExpr, ref(c.name)]);
  const object = plainCall(null, 'jsonb_build_object', args, loc);
  if (!nullable) return object;
  const key = entry.columns.find((c) => !c.nullable);
  if (!key) {
    throw invalid(`a whole-row reference to "${entry.alias}" on the nullable side of an outer join is not supported (it has no NOT NULL column)`, {
      reason: 'unsupported',
    });
  }
  return {
    kind: 'case',
    subject: null,
    whens: [{ when: { kind: 'is_null', arg: ref(key.name), negated: false, loc }, then: { kind: 'null', loc } }],
    otherwise: object,
    loc,
  };
}

/**
 * A bare name that is no column but a FROM item's alias is a whole-row reference, a record
 * value, which svcdb has not outside the functions above: "not supported" rather than PostgreSQL's
 * record or a misleading "column does not exist".
 */
export function refuseWholeRow(name: string, scope: Scope): void {
  for (let s: Scope | null = scope; s; s = s.parent) {
    if (s.entries.some((e) => e.alias === name)) {
      throw invalid(
        `whole-row reference "${name}" is not supported here: svcdb has no record values (to_jsonb(${name}), row_to_json(${name}) and json_agg(${name}) take one)`,
        {
          reason: 'unsupported',
        },
      );
    }
  }
}
