/**
 * svcdb's own syntax tree of expressions, queries and DML: what the parse adapter
 * (query/parse/translate/) makes of PostgreSQL's raw parse tree, and the only shape the binder reads.
 * They are one file because they are one recursive vocabulary (an expression holds a subquery, a
 * query holds expressions, a CTE holds an INSERT). Nodes are plain, immutable, kind-tagged objects;
 * `loc` is the node's offset in the request text (for error positions), -1 when unknown. No node
 * carries a parser's own types or a marker. DDL and the rest of the statements: statement.ts.
 */

// ---------------------------------------------------------------- expressions

/** A possibly qualified name: `schema.name` or `name`. Identifiers are already case-folded (quoted ones kept). */
export interface QualifiedName {
  readonly schema: string | null;
  readonly name: string;
}

/** A type as written: `numeric(10,2)`, `varchar(20)[]`, `vector(3)`, `timestamp with time zone`. */
export interface TypeName {
  readonly kind: 'type_name';
  /** PostgreSQL's canonical lower-case name ("int4", "timestamptz", "numeric", "vector", "bpchar", ...). */
  readonly name: string;
  readonly schema: string | null;
  /** Type modifiers: numeric(10, 2) -> [10, 2]; vector(3) -> [3]; interval fields are not kept. */
  readonly modifiers: readonly number[];
  /** Array dimensions: `int[]` -> 1, `int[][]` -> 2. */
  readonly arrayBounds: number;
  readonly loc: number;
}

/** A literal as written: numbers keep their text exactly (1.0 stays "1.0"; big integers are not rounded). */
export type Literal =
  | { readonly kind: 'number'; readonly text: string; readonly loc: number }
  | { readonly kind: 'string'; readonly value: string; readonly loc: number }
  | { readonly kind: 'bit_string'; readonly value: string; readonly loc: number }
  | { readonly kind: 'bool'; readonly value: boolean; readonly loc: number }
  | { readonly kind: 'null'; readonly loc: number };

/** `table.column`, `column`, `schema.table.column`; `star` for `t.*` / `*`. */
export interface ColumnRef {
  readonly kind: 'column_ref';
  /** Qualifier parts before the column: [] | [table] | [schema, table]. */
  readonly qualifier: readonly string[];
  /** The column name, or null for `*` / `t.*`. */
  readonly column: string | null;
  readonly loc: number;
}

/** `$1` (1-based as written). */
export interface ParamRef {
  readonly kind: 'param';
  readonly number: number;
  readonly loc: number;
}

/**
 * A binary or unary operator by its PostgreSQL name: '+', '-', '*', '/', '%', '^', '||', '=',
 * '<>' ('!=' is normalized to '<>'), '<', '<=', '>', '>=', '->', '->>', '#>', '#>>', '@>', '<@', '?',
 * '?|', '?&', '&&', '#-', '~', '~*', '!~', '!~*', '<->', '<=>', '<#>', '~~' (LIKE), '!~~', '~~*'
 * (ILIKE), '!~~*', and any other operator PostgreSQL's grammar accepts (the binder refuses unknown
 * ones). `left` is null for a prefix operator (`-x`, `@x`).
 */
export interface OperatorExpr {
  readonly kind: 'op';
  readonly op: string;
  readonly left: SqlExpr | null;
  readonly right: SqlExpr;
  readonly loc: number;
}

export interface BoolExpr {
  readonly kind: 'and' | 'or';
  /** Two or more operands, flattened. */
  readonly args: readonly SqlExpr[];
  readonly loc: number;
}

export interface NotExpr {
  readonly kind: 'not';
  readonly arg: SqlExpr;
  readonly loc: number;
}

/** `x IS [NOT] NULL`. */
export interface NullTest {
  readonly kind: 'is_null';
  readonly arg: SqlExpr;
  readonly negated: boolean;
  readonly loc: number;
}

/** `x IS [NOT] TRUE | FALSE | UNKNOWN` (value null = UNKNOWN). */
export interface BoolTest {
  readonly kind: 'is_bool';
  readonly arg: SqlExpr;
  readonly value: boolean | null;
  readonly negated: boolean;
  readonly loc: number;
}

/** `a IS [NOT] DISTINCT FROM b`. */
export interface DistinctFrom {
  readonly kind: 'distinct_from';
  readonly left: SqlExpr;
  readonly right: SqlExpr;
  /** true for IS NOT DISTINCT FROM. */
  readonly negated: boolean;
  readonly loc: number;
}

/** `x [NOT] BETWEEN [SYMMETRIC] a AND b`. */
export interface Between {
  readonly kind: 'between';
  readonly arg: SqlExpr;
  readonly low: SqlExpr;
  readonly high: SqlExpr;
  readonly negated: boolean;
  readonly symmetric: boolean;
  readonly loc: number;
}

/** `x [NOT] IN (a, b, c)` (a list; `IN (SELECT ...)` is a Sublink). */
export interface InList {
  readonly kind: 'in_list';
  readonly arg: SqlExpr;
  readonly list: readonly SqlExpr[];
  readonly negated: boolean;
  readonly loc: number;
}

/** `x [NOT] LIKE | ILIKE pattern [ESCAPE e]`, `x [NOT] SIMILAR TO pattern`. */
export interface LikeExpr {
  readonly kind: 'like';
  readonly arg: SqlExpr;
  readonly pattern: SqlExpr;
  readonly escape: SqlExpr | null;
  readonly caseInsensitive: boolean;
  readonly similar: boolean;
  readonly negated: boolean;
  readonly loc: number;
}

/** `x op ANY (array)` / `x op ALL (array)` (the array form; with a subquery it is a Sublink). */
export interface QuantifiedArray {
  readonly kind: 'quantified';
  readonly op: string;
  readonly all: boolean;
  readonly arg: SqlExpr;
  readonly array: SqlExpr;
  readonly loc: number;
}

/**
 * A subquery used as an expression. `scalar`: (SELECT ...); `exists`: EXISTS (SELECT ...);
 * `in`: test IN (SELECT ...) (op '='); `any`/`all`: test op ANY|SOME|ALL (SELECT ...);
 * `array`: ARRAY(SELECT ...). `test` is the left operand (a row constructor for `(a, b) IN (...)`).
 */
export interface Sublink {
  readonly kind: 'sublink';
  readonly mode: 'scalar' | 'exists' | 'in' | 'any' | 'all' | 'array';
  readonly test: SqlExpr | null;
  readonly op: string | null;
  readonly query: QueryExpr;
  readonly loc: number;
}

/** `f(args)`, aggregates and window calls included; the binder decides which a name is. */
export interface FuncCall {
  readonly kind: 'func';
  /** Lower-case unless quoted; `schema` set for `pg_catalog.lower(...)`. */
  readonly name: QualifiedName;
  readonly args: readonly SqlExpr[];
  /** Named arguments (`f(a => 1)`), parallel to args; null when none is named. */
  readonly argNames: readonly (string | null)[] | null;
  /** `count(*)`. */
  readonly star: boolean;
  readonly distinct: boolean;
  /** ORDER BY inside an aggregate's parentheses (`string_agg(x, ',' ORDER BY y)`). */
  readonly orderBy: readonly SortItem[];
  /** WITHIN GROUP (ORDER BY ...) of ordered-set aggregates. */
  readonly withinGroup: readonly SortItem[];
  readonly filter: SqlExpr | null;
  readonly over: WindowSpec | null;
  /** `f(VARIADIC arr)`. */
  readonly variadic: boolean;
  readonly loc: number;
}

/**
 * SQL-standard special forms PostgreSQL parses as functions are translated to FuncCall with
 * PostgreSQL's own function names: EXTRACT(f FROM x) -> extract('f', x); POSITION(a IN b) ->
 * position(b, a); SUBSTRING(x FROM a FOR b) -> substring(x, a, b); TRIM(BOTH c FROM x) -> btrim(x, c);
 * OVERLAY, x AT TIME ZONE z -> timezone(z, x); COLLATION FOR ... The forms below keep a node of their own.
 */
export interface SqlValueFunction {
  readonly kind: 'sql_value';
  /** current_date, current_time, current_timestamp, localtime, localtimestamp, current_user, session_user, current_role, current_catalog, current_schema, user. */
  readonly name: string;
  /** current_timestamp(3) precision; null when absent. */
  readonly precision: number | null;
  readonly loc: number;
}

export interface CaseExpr {
  readonly kind: 'case';
  /** CASE x WHEN ... (simple form); null for searched CASE. */
  readonly subject: SqlExpr | null;
  readonly whens: readonly { readonly when: SqlExpr; readonly then: SqlExpr }[];
  readonly otherwise: SqlExpr | null;
  readonly loc: number;
}

/** COALESCE, NULLIF, GREATEST, LEAST: own nodes, as in PostgreSQL (not functions: no lookup by name). */
export interface MinMaxCoalesce {
  readonly kind: 'coalesce' | 'greatest' | 'least' | 'nullif';
  readonly args: readonly SqlExpr[];
  readonly loc: number;
}

/** `x::type`, `CAST(x AS type)`, and typed literals `type 'text'` (`literal` true: TIMESTAMPTZ '...', INTERVAL '1 day'). */
export interface TypeCast {
  readonly kind: 'cast';
  readonly arg: SqlExpr;
  readonly type: TypeName;
  /** Written as `type 'string'` (a typed literal); the binder types the string directly. */
  readonly literal: boolean;
  /** INTERVAL '1' DAY / INTERVAL '1:30' HOUR TO MINUTE: the field qualifier as written, lower case; null otherwise. */
  readonly intervalFields: string | null;
  readonly loc: number;
}

/** `ARRAY[a, b]` / `'{1,2}'` is a string; nested ARRAY[[1,2],[3,4]] keeps inner ArrayExprs. */
export interface ArrayExpr {
  readonly kind: 'array';
  readonly elements: readonly SqlExpr[];
  readonly loc: number;
}

/** `ROW(a, b)` or `(a, b)`. */
export interface RowExpr {
  readonly kind: 'row';
  readonly items: readonly SqlExpr[];
  /** Written with the ROW keyword. */
  readonly explicit: boolean;
  readonly loc: number;
}

/** `arr[i]`, `arr[a:b]`, `(expr).field`, `(expr)[i]` (PostgreSQL's A_Indirection). */
export interface Indirection {
  readonly kind: 'indirection';
  readonly arg: SqlExpr;
  readonly steps: readonly IndirectionStep[];
  readonly loc: number;
}

export type IndirectionStep =
  | { readonly kind: 'index'; readonly index: SqlExpr }
  | { readonly kind: 'slice'; readonly lower: SqlExpr | null; readonly upper: SqlExpr | null }
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'star' };

/** `x COLLATE "C"`. */
export interface CollateExpr {
  readonly kind: 'collate';
  readonly arg: SqlExpr;
  readonly collation: string;
  readonly loc: number;
}

/** `DEFAULT` in an INSERT VALUES row or an UPDATE SET. */
export interface DefaultExpr {
  readonly kind: 'default';
  readonly loc: number;
}

export type SqlExpr =
  | Literal
  | ColumnRef
  | ParamRef
  | OperatorExpr
  | BoolExpr
  | NotExpr
  | NullTest
  | BoolTest
  | DistinctFrom
  | Between
  | InList
  | LikeExpr
  | QuantifiedArray
  | Sublink
  | FuncCall
  | SqlValueFunction
  | CaseExpr
  | MinMaxCoalesce
  | TypeCast
  | ArrayExpr
  | RowExpr
  | Indirection
  | CollateExpr
  | DefaultExpr;

/** One ORDER BY item. */
export interface SortItem {
  readonly expr: SqlExpr;
  /** null when not written (ASC). */
  readonly direction: 'asc' | 'desc' | null;
  /** null when not written (PostgreSQL's default: NULLS LAST for ASC, FIRST for DESC). */
  readonly nulls: 'first' | 'last' | null;
  /** ORDER BY x USING <: the operator; null otherwise. */
  readonly using: string | null;
}

/** A window: OVER (...) inline, OVER name, or a WINDOW clause entry (`name` set, `ref` its base). */
export interface WindowSpec {
  /** The WINDOW clause name when this is a definition; null inline. */
  readonly name: string | null;
  /** OVER w / OVER (w ORDER BY ...): the referenced window's name. */
  readonly ref: string | null;
  readonly partitionBy: readonly SqlExpr[];
  readonly orderBy: readonly SortItem[];
  /** null = the default frame (RANGE UNBOUNDED PRECEDING .. CURRENT ROW, or the whole partition without ORDER BY). */
  readonly frame: WindowFrame | null;
  readonly loc: number;
}

export interface WindowFrame {
  readonly mode: 'rows' | 'range' | 'groups';
  readonly start: FrameBound;
  readonly end: FrameBound;
  readonly exclude: 'no_others' | 'current_row' | 'group' | 'ties';
}

export type FrameBound =
  | { readonly kind: 'unbounded_preceding' }
  | { readonly kind: 'unbounded_following' }
  | { readonly kind: 'current_row' }
  | { readonly kind: 'preceding'; readonly offset: SqlExpr }
  | { readonly kind: 'following'; readonly offset: SqlExpr };

// ---------------------------------------------------------------- queries

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

// ---------------------------------------------------------------- DML

/** `INSERT INTO t [AS a] [(cols)] VALUES ... | SELECT ... | DEFAULT VALUES [ON CONFLICT ...] [RETURNING ...]`. */
export interface InsertStatement {
  readonly kind: 'insert';
  readonly with: WithClause | null;
  readonly table: QualifiedName;
  readonly alias: string | null;
  /** null: all columns in table order. */
  readonly columns: readonly string[] | null;
  /** null: DEFAULT VALUES. A ValuesQuery's rows may hold DefaultExpr items. */
  readonly source: QueryExpr | null;
  /** OVERRIDING SYSTEM VALUE / USER VALUE. */
  readonly overriding: 'system' | 'user' | null;
  readonly onConflict: OnConflict | null;
  readonly returning: readonly SelectTarget[] | null;
  readonly loc: number;
}

export interface OnConflict {
  /** ON CONFLICT (a, b) [WHERE ...]: inference columns (expressions refused by the binder); null when absent. */
  readonly columns: readonly string[] | null;
  readonly inferenceWhere: SqlExpr | null;
  /** ON CONFLICT ON CONSTRAINT name. */
  readonly constraint: string | null;
  readonly action: 'nothing' | 'update';
  readonly set: readonly SetClause[];
  readonly where: SqlExpr | null;
}

/** `col = expr`, `col[1] = expr` (indirection refused by the binder), `(a, b) = (x, y)` expanded to one clause each; `(a, b) = (SELECT ...)` keeps `multi`. */
export interface SetClause {
  readonly column: string;
  readonly value: SqlExpr;
  /** For `(a, b) = (SELECT x, y ...)`: which output column of the subquery this column takes (0-based), with the shared source. */
  readonly multi: { readonly source: SqlExpr; readonly index: number; readonly count: number } | null;
  /** `SET a[i] = v`: the one subscript assigned (absent for a whole column). */
  readonly subscript?: SqlExpr;
  readonly loc: number;
}

export interface UpdateStatement {
  readonly kind: 'update';
  readonly with: WithClause | null;
  readonly table: QualifiedName;
  readonly alias: string | null;
  readonly only: boolean;
  readonly set: readonly SetClause[];
  readonly from: readonly FromItem[];
  readonly where: SqlExpr | null;
  readonly returning: readonly SelectTarget[] | null;
  readonly loc: number;
}

export interface DeleteStatement {
  readonly kind: 'delete';
  readonly with: WithClause | null;
  readonly table: QualifiedName;
  readonly alias: string | null;
  readonly only: boolean;
  readonly using: readonly FromItem[];
  readonly where: SqlExpr | null;
  readonly returning: readonly SelectTarget[] | null;
  readonly loc: number;
}

export type DmlStatement = InsertStatement | UpdateStatement | DeleteStatement;
