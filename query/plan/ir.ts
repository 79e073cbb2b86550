/** The engine's intermediate representation: bound expressions and plan nodes (mutually recursive, so one file). */
import type { IndexDef, TableDef } from '../../core/catalog.js';
import type { CastFn, QType, QValue, ResolvedAggregate, ResolvedFunction } from '../types/contract.js';

/**
 * Bound expressions: every name resolved to a row slot, every operator and function resolved by
 * the TypeSystem, every node typed. Immutable; `kind` is the discriminant.
 * Row slots: `column.index` is a position in the input row of the node that evaluates it.
 */
export type Expr =
  | ConstExpr
  | { readonly kind: 'param'; readonly type: QType; readonly index: number }
  | { readonly kind: 'column'; readonly type: QType; readonly index: number; readonly name: string }
  /** A column of an enclosing query's current row: depth 1 is the nearest enclosing query. */
  | { readonly kind: 'outer'; readonly type: QType; readonly depth: number; readonly index: number; readonly name: string }
  | { readonly kind: 'call'; readonly type: QType; readonly fn: ResolvedFunction; readonly args: readonly Expr[]; readonly label: string }
  | { readonly kind: 'cast'; readonly type: QType; readonly cast: CastFn; readonly arg: Expr }
  | { readonly kind: 'and' | 'or'; readonly type: QType; readonly args: readonly Expr[] }
  | { readonly kind: 'not'; readonly type: QType; readonly arg: Expr }
  | { readonly kind: 'is_null'; readonly type: QType; readonly arg: Expr; readonly negated: boolean }
  /** IS [NOT] TRUE / FALSE / UNKNOWN: never NULL. */
  | { readonly kind: 'is_bool'; readonly type: QType; readonly arg: Expr; readonly value: boolean | null; readonly negated: boolean }
  | { readonly kind: 'case'; readonly type: QType; readonly whens: readonly { readonly cond: Expr; readonly result: Expr }[]; readonly otherwise: Expr }
  | { readonly kind: 'coalesce'; readonly type: QType; readonly args: readonly Expr[] }
  | {
      readonly kind: 'minmax';
      readonly type: QType;
      readonly args: readonly Expr[];
      readonly greatest: boolean;
      readonly compare: (a: QValue, b: QValue) => number;
    }
  /** x IN (list): each element compared with its own resolved `=`. */
  | {
      readonly kind: 'in_list';
      readonly type: QType;
      readonly arg: Expr;
      readonly list: readonly Expr[];
      readonly eq: readonly ResolvedFunction[];
      readonly negated: boolean;
    }
  | {
      readonly kind: 'distinct_from';
      readonly type: QType;
      readonly left: Expr;
      readonly right: Expr;
      readonly eq: ResolvedFunction;
      readonly negated: boolean;
    }
  | { readonly kind: 'array'; readonly type: QType; readonly elements: readonly Expr[] }
  /** x op ANY|ALL (array): op resolved for (x, element). */
  | { readonly kind: 'quantified'; readonly type: QType; readonly arg: Expr; readonly array: Expr; readonly op: ResolvedFunction; readonly all: boolean }
  | SubqueryExpr
  /** Before aggregation rewrite only: an aggregate call (replaced by a column of the Aggregate node). */
  | { readonly kind: 'agg'; readonly type: QType; readonly call: AggCall }
  /** Before window rewrite only. */
  | { readonly kind: 'window'; readonly type: QType; readonly call: WindowCall };

export interface ConstExpr {
  readonly kind: 'const';
  readonly type: QType;
  readonly value: QValue;
}

export type SubqueryMode = 'scalar' | 'exists' | 'in' | 'any' | 'all' | 'array';

export interface SubqueryExpr {
  readonly kind: 'subquery';
  readonly type: QType;
  /** Unique within a statement: the key of its result in the execution env. */
  readonly id: number;
  readonly mode: SubqueryMode;
  readonly plan: Plan;
  /** in/any/all: the left operand and the comparison (left, subquery column). */
  readonly test: { readonly left: Expr; readonly op: ResolvedFunction; readonly rightCast: CastFn | null } | null;
  /** (a, b) IN (SELECT x, y ...): one comparison per column (mode 'in' only). */
  readonly tuple?: readonly { readonly left: Expr; readonly op: ResolvedFunction; readonly rightCast: CastFn | null }[];
  /** References a column of an enclosing query: re-run per outer row. */
  readonly correlated: boolean;
}

export interface AggCall {
  readonly name: string;
  readonly agg: ResolvedAggregate;
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  readonly star: boolean;
  readonly filter: Expr | null;
  readonly orderBy: readonly SortKey[];
  /** Hash key of each argument's type, for DISTINCT. */
  readonly argTypes: readonly QType[];
}

export type WindowFnName =
  'row_number' | 'rank' | 'dense_rank' | 'lag' | 'lead' | 'aggregate' | 'first_value' | 'last_value' | 'nth_value' | 'ntile' | 'percent_rank' | 'cume_dist';

export interface WindowCall {
  readonly fn: WindowFnName;
  /** For 'aggregate'. */
  readonly agg: AggCall | null;
  readonly args: readonly Expr[];
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly SortKey[];
  /** Which rows of the partition an aggregate, first_value, last_value and nth_value see for each row. */
  readonly frame: WindowFrame;
}

/**
 * ROWS counts rows from the current one; RANGE reaches to the current row's first or last peer
 * (CURRENT ROW) or to the rows whose one ORDER BY key is within the offset of the current row's; GROUPS counts peer groups from the current row's. The default is RANGE UNBOUNDED PRECEDING to CURRENT
 * ROW, which without ORDER BY (every row a peer) is the whole partition.
 */
export interface WindowFrame {
  readonly mode: 'rows' | 'range' | 'groups';
  readonly start: FrameBound;
  readonly end: FrameBound;
  /** EXCLUDE CURRENT ROW | GROUP | TIES (absent: EXCLUDE NO OTHERS). */
  readonly exclude?: 'current_row' | 'group' | 'ties';
}

export type FrameBound =
  { readonly kind: 'unbounded_preceding' | 'current' | 'unbounded_following' } | { readonly kind: 'preceding' | 'following'; readonly offset: number };

export interface SortKey {
  readonly expr: Expr;
  readonly descending: boolean;
  readonly nullsFirst: boolean;
}

export const BOOL: QType = { name: 'bool' };
export const INT4: QType = { name: 'int4' };
export const INT8: QType = { name: 'int8' };
export const TEXT: QType = { name: 'text' };
export const UNKNOWN: QType = { name: 'unknown' };
export const NUMERIC: QType = { name: 'numeric' };
export const FLOAT8: QType = { name: 'float8' };

export const constant = (type: QType, value: QValue): ConstExpr => ({ kind: 'const', type, value });
export const NULL_UNKNOWN: ConstExpr = constant(UNKNOWN, null);

/**
 * Plan nodes: immutable, discriminated by `kind`. The binder builds a logical tree; the optimizer
 * returns a new tree with access paths, join strategies and estimates filled in. Every node
 * produces rows as arrays of values in the order of `columns`.
 */
export interface OutputColumn {
  readonly name: string;
  readonly type: QType;
  readonly nullable: boolean;
}

export interface Estimate {
  readonly rows: number;
  readonly cost: number;
}

export interface KeyBound {
  readonly expr: Expr;
  readonly inclusive: boolean;
}

/** How a scan reads: every row in key order, or a key range of the primary key or an index. */
export type Access =
  | { readonly kind: 'seq'; readonly reverse: boolean }
  | {
      readonly kind: 'pk' | 'index';
      readonly index: IndexDef;
      /** Values for a prefix of the key columns (cast to their types). */
      readonly eq: readonly Expr[];
      /** Bounds on the column after the prefix. */
      readonly lower: KeyBound | null;
      readonly upper: KeyBound | null;
      readonly reverse: boolean;
      /** Readable condition for EXPLAIN. */
      readonly condText: string;
      /** Filter conjuncts the key range implements exactly (removed from the scan's filter). */
      readonly consumed?: readonly Expr[];
    }
  | VectorAccess;

/**
 * ORDER BY column <op> vector LIMIT k through an hnsw index: the scan yields the k nearest rows
 * that pass its filter, in order of `distance` (computed exactly per row), or falls back to an
 * exact scan when the index cannot serve the query.
 */
export interface VectorAccess {
  readonly kind: 'vector';
  readonly index: IndexDef;
  /** The ORDER BY expression over the scan's columns (column <-> / <=> / <#> query). */
  readonly distance: Expr;
  /** The query vector (a stable expression: a parameter or a constant). */
  readonly query: Expr;
  /** Rows the scan must yield: LIMIT + OFFSET. */
  readonly topN: TopN;
  readonly reverse: false;
  /** Readable ORDER BY for EXPLAIN. */
  readonly orderText: string;
  /** The key range of the WHERE that the exact fallback scans (its conditions are in the filter too); null: the whole table. */
  readonly exact: KeyAccess | null;
}

export type KeyAccess = Extract<Access, { readonly kind: 'pk' | 'index' }>;

export interface ScanNode {
  readonly kind: 'scan';
  readonly table: TableDef;
  readonly alias: string;
  readonly columns: readonly OutputColumn[];
  /** Append the encoded primary key (a Uint8Array) as one more value: DML needs it. */
  readonly withKey: boolean;
  readonly filter: Expr | null;
  readonly access: Access;
  readonly est?: Estimate;
  /** Column positions the query reads (others are not decoded); absent: all. */
  readonly needed?: readonly number[];
}

export type JoinType = 'inner' | 'left' | 'right' | 'full' | 'cross';

export interface JoinNode {
  readonly kind: 'join';
  readonly joinType: JoinType;
  readonly left: Plan;
  readonly right: Plan;
  /** Bound against left columns followed by right columns. */
  readonly on: Expr | null;
  /** Set by the optimizer for equi-joins: keys over left rows and over right rows, cast to common types. */
  readonly hash: { readonly leftKeys: readonly Expr[]; readonly rightKeys: readonly Expr[]; readonly residual: Expr | null } | null;
  /**
   * LATERAL: the right side reads the left row (outer references of depth 1, the left row placed
   * at this offset of the FROM row), so it runs again for each left row.
   */
  readonly lateral?: number;
  readonly columns: readonly OutputColumn[];
  readonly est?: Estimate;
}

/** A sort under LIMIT keeps only the first limit + offset rows (both constant expressions). */
export interface TopN {
  readonly limit: Expr;
  readonly offset: Expr | null;
}

/** The set-returning functions a function_scan runs. */
export type SetFunctionName =
  | 'generate_series'
  | 'unnest'
  | 'regexp_matches'
  | 'regexp_split_to_table'
  | 'jsonb_to_record'
  | 'jsonb_to_recordset'
  | 'jsonb_array_elements'
  | 'jsonb_array_elements_text'
  | 'jsonb_each'
  | 'jsonb_each_text'
  | 'jsonb_object_keys';

export type Plan =
  | ScanNode
  | JoinNode
  | { readonly kind: 'values'; readonly rows: readonly (readonly Expr[])[]; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  | { readonly kind: 'one_row'; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  /** A set-returning function in FROM: generate_series(start, stop[, step]) over int4 or int8, unnest(array). */
  | {
      readonly kind: 'function_scan';
      readonly fn: SetFunctionName;
      readonly args: readonly Expr[];
      /** jsonb_each[_text] as a whole select-list item: one text column, each row's record text `(key,value)`. */
      readonly record?: boolean;
      readonly columns: readonly OutputColumn[];
      readonly est?: Estimate;
    }
  /**
   * ROWS FROM (f(...), g(...)), `unnest(a, b)` and several set-returning calls in one select list:
   * the functions run side by side, row i holding each one's i-th row, until the longest ends
   * (the shorter padded with NULLs, as PostgreSQL 10+ runs them).
   */
  | { readonly kind: 'rows_from'; readonly functions: readonly FunctionScanNode[]; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  | { readonly kind: 'filter'; readonly input: Plan; readonly predicate: Expr; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  | { readonly kind: 'project'; readonly input: Plan; readonly exprs: readonly Expr[]; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  | {
      readonly kind: 'aggregate';
      readonly input: Plan;
      readonly groupBy: readonly Expr[];
      readonly aggs: readonly AggCall[];
      /**
       * GROUPING SETS / ROLLUP / CUBE: each set as indexes into groupBy (a key outside the set is
       * NULL in its rows); absent for a plain GROUP BY. `grouping`: per GROUPING(…) call, its
       * arguments' indexes into groupBy; the calls' values follow the aggregates in the output.
       */
      readonly sets?: readonly (readonly number[])[];
      readonly grouping?: readonly (readonly number[])[];
      readonly columns: readonly OutputColumn[];
      readonly est?: Estimate;
    }
  | { readonly kind: 'window'; readonly input: Plan; readonly calls: readonly WindowCall[]; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  | {
      readonly kind: 'sort';
      readonly input: Plan;
      readonly keys: readonly SortKey[];
      readonly columns: readonly OutputColumn[];
      readonly est?: Estimate;
      readonly topN?: TopN;
    }
  | {
      readonly kind: 'limit';
      readonly input: Plan;
      readonly limit: Expr | null;
      readonly offset: Expr | null;
      readonly columns: readonly OutputColumn[];
      readonly est?: Estimate;
    }
  /** DISTINCT (on = null: whole row) or DISTINCT ON (first row per key, input sorted by it). */
  | { readonly kind: 'distinct'; readonly input: Plan; readonly on: readonly Expr[] | null; readonly columns: readonly OutputColumn[]; readonly est?: Estimate }
  | {
      readonly kind: 'setop';
      readonly op: 'union' | 'intersect' | 'except';
      readonly all: boolean;
      readonly left: Plan;
      readonly right: Plan;
      readonly columns: readonly OutputColumn[];
      readonly est?: Estimate;
    }
  /**
   * WITH RECURSIVE name: `left` (the non-recursive term) once, then `right` (the recursive term)
   * over the rows the previous round added (its working table, read by worktable_scan `id`) until
   * a round adds none. UNION (all = false) drops rows already produced.
   */
  | {
      readonly kind: 'recursive_union';
      readonly id: number;
      readonly name: string;
      readonly all: boolean;
      readonly left: Plan;
      readonly right: Plan;
      readonly columns: readonly OutputColumn[];
      readonly est?: Estimate;
    }
  /** The working table of the enclosing recursive_union `id`. */
  | { readonly kind: 'worktable_scan'; readonly id: number; readonly name: string; readonly columns: readonly OutputColumn[]; readonly est?: Estimate };

export type PlanKind = Plan['kind'];

/** One set-returning function in FROM (alone, or one of a rows_from). */
export type FunctionScanNode = Extract<Plan, { kind: 'function_scan' }>;

/** The children of a node, in order. */
export function children(plan: Plan): Plan[] {
  switch (plan.kind) {
    case 'scan':
    case 'values':
    case 'one_row':
    case 'function_scan':
    case 'rows_from':
    case 'worktable_scan':
      return [];
    case 'join':
    case 'setop':
    case 'recursive_union':
      return [plan.left, plan.right];
    default:
      return [plan.input];
  }
}
