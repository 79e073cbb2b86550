/**
 * svcdb's own syntax tree of queries: SELECT, VALUES, set operations, FROM items, WITH.
 * See expr.ts for the conventions (kind-tagged, immutable, `loc` offsets).
 */
import type { QualifiedName, SortItem, SqlExpr, TypeName, WindowSpec } from './expr.js';
import type { DmlStatement } from './statement.js';

/** Anything that yields rows: a SELECT, a VALUES list, or a set operation of two queries. */
export type QueryExpr = SelectQuery | ValuesQuery | SetOperation;

/** WITH, ORDER BY, LIMIT/OFFSET and FOR UPDATE belong to the query they are written on. */
export interface QueryTail {
  readonly with: WithClause | null;
  readonly orderBy: readonly SortItem[];
  /** null when absent; LIMIT ALL is null too. Any expression (`LIMIT $1 + 1`, `LIMIT (SELECT ...)`). */
  readonly limit: SqlExpr | null;
  readonly offset: SqlExpr | null;
  /** FETCH FIRST n ROWS WITH TIES. */
  readonly withTies: boolean;
  /** FOR UPDATE / FOR SHARE ... (accepted and ignored by a snapshot engine, or refused: the binder decides). */
  readonly locking: readonly { readonly strength: 'update' | 'no_key_update' | 'share' | 'key_share'; readonly of: readonly string[] }[];
  readonly loc: number;
}

export interface SelectQuery extends QueryTail {
  readonly kind: 'select';
  /** null: no DISTINCT; []: DISTINCT; [exprs]: DISTINCT ON (exprs). */
  readonly distinct: readonly SqlExpr[] | null;
  readonly targets: readonly SelectTarget[];
  readonly from: readonly FromItem[];
  readonly where: SqlExpr | null;
  readonly groupBy: readonly GroupingItem[];
  /** GROUP BY DISTINCT. */
  readonly groupByDistinct: boolean;
  readonly having: SqlExpr | null;
  /** WINDOW w AS (...), each with its `name`. */
  readonly windows: readonly WindowSpec[];
}

/** One select-list item: an expression with an optional alias, or `*` / `t.*` (a column_ref with column null). */
export interface SelectTarget {
  readonly expr: SqlExpr;
  readonly alias: string | null;
  readonly loc: number;
}

export type GroupingItem =
  | { readonly kind: 'expr'; readonly expr: SqlExpr }
  | { readonly kind: 'empty' }
  | { readonly kind: 'rollup' | 'cube'; readonly items: readonly SqlExpr[] }
  | { readonly kind: 'sets'; readonly sets: readonly GroupingItem[] };

export interface ValuesQuery extends QueryTail {
  readonly kind: 'values';
  readonly rows: readonly (readonly SqlExpr[])[];
}

export interface SetOperation extends QueryTail {
  readonly kind: 'set_op';
  readonly op: 'union' | 'intersect' | 'except';
  readonly all: boolean;
  readonly left: QueryExpr;
  readonly right: QueryExpr;
}

export interface WithClause {
  readonly recursive: boolean;
  readonly ctes: readonly CommonTableExpr[];
}

export interface CommonTableExpr {
  readonly name: string;
  readonly columns: readonly string[] | null;
  /** AS MATERIALIZED / AS NOT MATERIALIZED; null when not written. */
  readonly materialized: boolean | null;
  /** A CTE's body: a query, or a data-modifying statement (INSERT/UPDATE/DELETE ... RETURNING). */
  readonly query: QueryExpr | DmlStatement;
  readonly loc: number;
}

/** `AS alias (c1, c2)`. */
export interface Alias {
  readonly name: string;
  readonly columns: readonly string[] | null;
}

export type FromItem = TableRef | SubqueryRef | FunctionRef | JoinExpr;

export interface TableRef {
  readonly kind: 'table';
  readonly name: QualifiedName;
  readonly alias: Alias | null;
  /** `ONLY t` (inheritance: no effect here). */
  readonly only: boolean;
  readonly loc: number;
}

export interface SubqueryRef {
  readonly kind: 'subquery';
  readonly query: QueryExpr;
  readonly alias: Alias | null;
  readonly lateral: boolean;
  readonly loc: number;
}

/** A function in FROM: `generate_series(1, 3) AS g(n)`, `unnest(a) WITH ORDINALITY`, `ROWS FROM (...)`. */
export interface FunctionRef {
  readonly kind: 'function';
  /** One call, or several for ROWS FROM (f(), g()). Each is a FuncCall (or a special form translated to one). */
  readonly calls: readonly SqlExpr[];
  readonly alias: Alias | null;
  readonly lateral: boolean;
  readonly withOrdinality: boolean;
  /** Column definition list: `AS t(a int, b text)` for record-returning functions. */
  readonly columnDefs: readonly { readonly name: string; readonly type: TypeName }[] | null;
  readonly loc: number;
}

export interface JoinExpr {
  readonly kind: 'join';
  readonly type: 'inner' | 'left' | 'right' | 'full' | 'cross';
  readonly left: FromItem;
  readonly right: FromItem;
  readonly natural: boolean;
  /** USING (a, b); null when absent. */
  readonly using: readonly string[] | null;
  /** JOIN ... USING (a) AS j. */
  readonly usingAlias: string | null;
  readonly on: SqlExpr | null;
  /** `(a JOIN b) AS j`. */
  readonly alias: Alias | null;
  readonly loc: number;
}
