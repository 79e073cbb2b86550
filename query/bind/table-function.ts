import type { FuncCall, FunctionRef, SqlExpr } from '../parse/index.js';
import { INT4, INT8, TEXT, type Expr, type WindowCall } from '../plan/expr.js';
import type { FunctionScanNode, OutputColumn, Plan, SetFunctionName } from '../plan/nodes.js';
import type { QType } from '../types/contract.js';
import { coerce, unify } from './coerce.js';
import { invalid, mismatch } from './context.js';
import { arrayOf, elementType, isArrayType, typeCategory } from '../types/index.js';
import { bindExpr, type ExprEnv } from './expr.js';
import { bindTypeName } from './type-names.js';
import { renamedColumns, type Scope } from './scope.js';
import { markScalarFunctionItem } from './whole-row.js';

/** A call of one of the set-returning functions svcdb has (in FROM or in a select list). */
export function isSetReturningCall(node: SqlExpr | null | undefined): node is FuncCall {
  return node?.kind === 'func' && node.name.schema === null && SET_FUNCTIONS.has(node.name.name) && node.over === null;
}

const JSONB_SET_FUNCTIONS = new Set(['jsonb_array_elements', 'jsonb_array_elements_text', 'jsonb_each', 'jsonb_each_text', 'jsonb_object_keys']);
/** json_array_elements, json_each, …: the jsonb functions under their json names (svcdb's json is jsonb). */
const JSON_SET_FUNCTIONS = new Set([...JSONB_SET_FUNCTIONS].map((f) => f.replace('jsonb', 'json')));
const SET_FUNCTIONS = new Set(['generate_series', 'unnest', 'regexp_matches', 'regexp_split_to_table', ...JSONB_SET_FUNCTIONS, ...JSON_SET_FUNCTIONS]);

/**
 * A function in FROM: `generate_series(1, 3) [WITH ORDINALITY] [AS] g(n [, ord])`. A function
 * returning one column is named by its alias (PostgreSQL's rule), else by the function's name.
 * `ROWS FROM (f(…), g(…))` and `unnest(a, b, …)` (PostgreSQL's shorthand for ROWS FROM of one
 * unnest per array) run the functions side by side (a rows_from); their columns keep the
 * functions' own names. The arguments may read earlier FROM items (LATERAL: from.ts re-runs the
 * item per row).
 */
export function bindFunctionItem(item: FunctionRef, scope: Scope, env: ExprEnv): Plan {
  const only = item.calls.length === 1 ? item.calls[0]! : null;
  if (only?.kind === 'func' && only.name.schema === null && RECORD_FUNCTIONS.has(only.name.name)) {
    if (item.withOrdinality && item.columnDefs) throw invalid('WITH ORDINALITY cannot be used with a column definition list');
    const plan = bindToRecord(only, item, env);
    scope.add(item.alias?.name ?? only.name.name, plan.columns);
    return plan;
  }
  if (item.columnDefs) throw invalid('a column definition list is only allowed for functions returning "record"');
  const alias = item.alias?.name ?? (item.calls.length === 1 && item.calls[0]!.kind === 'func' ? item.calls[0]!.name.name : 'rows_from');
  const functions = item.calls.flatMap((call) => {
    const fnName = call.kind === 'func' ? call.name.name : 'function';
    if (!isSetReturningCall(call)) throw invalid(`function ${fnName}() in FROM is not supported`, { reason: 'unsupported' });
    return call.name.name === 'unnest' ? bindUnnests(call, env) : [bindSetCall(call, env)];
  });
  let plan: Plan = functions.length === 1 ? named(functions[0]!, alias) : rowsFrom(functions);
  if (item.withOrdinality) plan = withOrdinality(plan);
  const entry = scope.add(alias, renamedColumns(plan.columns, item.alias?.columns ?? null));
  // One function of one column (no ORDINALITY): its whole row is that scalar (whole-row.ts).
  if (functions.length === 1 && !item.withOrdinality && plan.columns.length === 1) markScalarFunctionItem(entry);
  return plan;
}

/** One set-returning call as a function_scan, its one column (if it has one) named by the function. */
export function bindSetCall(call: FuncCall, env: ExprEnv): FunctionScanNode {
  const name = call.name.name;
  if (name === 'unnest') {
    const unnests = bindUnnests(call, env);
    // PostgreSQL's multi-array unnest exists only in FROM (a shorthand for ROWS FROM).
    if (unnests.length > 1)
      throw mismatch(`function unnest(${unnests.map((u) => env.ctx.types.typeText(u.args[0]!.type).toLowerCase()).join(', ')}) does not exist`);
    return unnests[0]!;
  }
  if (name === 'regexp_matches' || name === 'regexp_split_to_table') return bindRegexpSet(call, env, name);
  return name === 'generate_series' ? bindSeries(call, env, name) : bindJsonbSet(call, env, name);
}

/** The record-returning functions svcdb has: their columns are the column definition list's. */
const RECORD_FUNCTIONS = new Set(['jsonb_to_record', 'jsonb_to_recordset', 'json_to_record', 'json_to_recordset']);

/**
 * jsonb_to_record(object) / jsonb_to_recordset(array of objects) `AS x(a int, b text)`: a row per
 * object (one for _record), each column the member of its name read as its type (json_* are the same:
 * svcdb's json is jsonb).
 */
function bindToRecord(call: FuncCall, item: FunctionRef, env: ExprEnv): FunctionScanNode {
  const written = call.name.name;
  if (!item.columnDefs) throw invalid('a column definition list is required for functions returning "record"');
  const bound = plainArgs(call, written).map((a) => bindExpr(a, env));
  if (bound.length !== 1 || !['jsonb', 'unknown'].includes(bound[0]!.type.name)) {
    const shown = bound.map((e) => (e.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(e.type).toLowerCase())).join(', ');
    throw mismatch(`function ${written}(${shown}) does not exist`, { function: written });
  }
  const columns: OutputColumn[] = item.columnDefs.map((d) => ({ name: d.name, type: bindTypeName(env.ctx, d.type), nullable: true }));
  const fn = written.endsWith('recordset') ? 'jsonb_to_recordset' : 'jsonb_to_record';
  return { kind: 'function_scan', fn, args: [coerce(env.ctx, bound[0]!, JSONB, 'implicit')], columns };
}

/**
 * A function returning a scalar (no OUT parameters: generate_series, unnest, jsonb_object_keys)
 * has its column named by the FROM alias, as PostgreSQL names it; jsonb_array_elements keeps `value`.
 */
function named(fn: FunctionScanNode, alias: string): FunctionScanNode {
  if (fn.columns.length !== 1 || fn.fn.startsWith('jsonb_array_elements')) return fn;
  return { ...fn, columns: [{ ...fn.columns[0]!, name: alias }] };
}

/** Functions side by side; every column may be NULL (a shorter function is padded). */
export function rowsFrom(functions: readonly FunctionScanNode[]): Plan {
  const columns = functions.flatMap((f) => f.columns.map((c) => ({ ...c, nullable: true })));
  return { kind: 'rows_from', functions, columns };
}

const JSONB: QType = { name: 'jsonb' };

/**
 * jsonb_array_elements[_text] (a column `value`), jsonb_each[_text] (`key`, `value`) and
 * jsonb_object_keys (one column named by the alias, as PostgreSQL names a function without OUT parameters).
 */
function bindJsonbSet(node: FuncCall, env: ExprEnv, alias: string): FunctionScanNode {
  const written = node.name.name;
  const fn = written.replace(/^json_/, 'jsonb_') as Exclude<SetFunctionName, 'generate_series' | 'unnest'>;
  const bound = plainArgs(node, fn).map((a) => bindExpr(a, env));
  if (bound.length !== 1 || !['jsonb', 'unknown'].includes(bound[0]!.type.name)) {
    const shown = bound.map((e) => (e.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(e.type).toLowerCase())).join(', ');
    throw mismatch(`function ${written}(${shown}) does not exist`, { function: written });
  }
  const arg = coerce(env.ctx, bound[0]!, JSONB, 'implicit');
  const value = fn.endsWith('_text') ? TEXT : JSONB;
  const columns: OutputColumn[] =
    fn === 'jsonb_object_keys'
      ? [{ name: alias, type: TEXT, nullable: false }]
      : fn === 'jsonb_each' || fn === 'jsonb_each_text'
        ? [
            { name: 'key', type: TEXT, nullable: false },
            { name: 'value', type: value, nullable: true },
          ]
        : [{ name: 'value', type: value, nullable: true }];
  return { kind: 'function_scan', fn, args: [arg], columns };
}

/** WITH ORDINALITY: a bigint column numbering the function's rows from 1 (row_number over them, in their order). */
function withOrdinality(plan: Plan): Plan {
  const call: WindowCall = {
    fn: 'row_number',
    agg: null,
    args: [],
    partitionBy: [],
    orderBy: [],
    frame: { mode: 'range', start: { kind: 'unbounded_preceding' }, end: { kind: 'current' } },
  };
  const columns: OutputColumn[] = [...plan.columns, { name: 'ordinality', type: INT8, nullable: false }];
  return { kind: 'window', input: plan, calls: [call], columns };
}

/**
 * unnest(array [, array …]): one function_scan per array, each a column `unnest` of its element
 * type (several are zipped by the caller, as PostgreSQL's ROWS FROM (unnest(a), unnest(b))).
 */
function bindUnnests(node: FuncCall, env: ExprEnv): FunctionScanNode[] {
  const bound = plainArgs(node, 'unnest').map((a) => bindExpr(a, env));
  if (bound.length === 0 || !bound.every((e) => isArrayType(e.type))) {
    const shown = bound.map((e) => (e.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(e.type).toLowerCase())).join(', ');
    throw mismatch(`function unnest(${shown}) does not exist`, { function: 'unnest' });
  }
  return bound.map((arg) => ({ kind: 'function_scan', fn: 'unnest', args: [arg], columns: [{ name: 'unnest', type: elementType(arg.type), nullable: true }] }));
}

/**
 * regexp_matches(string, pattern [, flags]): a text[] row per match (the capture groups, or the
 * whole match without groups); the first match only, or every one with flag g.
 * regexp_split_to_table(string, pattern [, flags]): a text row per piece between matches.
 */
function bindRegexpSet(node: FuncCall, env: ExprEnv, name: 'regexp_matches' | 'regexp_split_to_table'): FunctionScanNode {
  const bound = plainArgs(node, name).map((a) => bindExpr(a, env));
  if (bound.length < 2 || bound.length > 3 || !bound.every((e) => e.type.name === 'unknown' || typeCategory(e.type) === 'S')) {
    const shown = bound.map((e) => (e.type.name === 'unknown' ? 'unknown' : env.ctx.types.typeText(e.type).toLowerCase())).join(', ');
    throw mismatch(`function ${name}(${shown}) does not exist`, { function: name });
  }
  const args = bound.map((e) => coerce(env.ctx, e, TEXT, 'implicit'));
  const type = name === 'regexp_matches' ? arrayOf(TEXT) : TEXT;
  return { kind: 'function_scan', fn: name, args, columns: [{ name, type, nullable: false }] };
}

function plainArgs(node: FuncCall, fn: string): readonly SqlExpr[] {
  if (node.star || node.distinct || node.orderBy.length > 0 || node.filter !== null || node.argNames !== null || node.variadic) {
    throw invalid(`${fn} takes plain arguments`, { reason: 'unsupported' });
  }
  return node.args;
}

/**
 * generate_series(start, stop[, step]) over integers as a plan of one column named `name`.
 * `env` is over the FROM scope: a column of this query's row is a reference to a FROM item.
 */
export function bindSeries(node: FuncCall, env: ExprEnv, name: string): FunctionScanNode {
  const bound = plainArgs(node, 'generate_series').map((a) => bindExpr(a, env));
  const shown = (): string => bound.map((e) => env.ctx.types.typeText(e.type).toLowerCase()).join(', ');
  if (bound.length < 2 || bound.length > 3) throw mismatch(`function generate_series(${shown()}) does not exist`);
  const { type } = unify(env.ctx, bound, 'generate_series');
  const target = type.name === 'int8' ? INT8 : type.name === 'int4' || type.name === 'int2' || type.name === 'unknown' ? INT4 : null;
  if (!target) throw mismatch(`generate_series(${shown()}) is not supported: svcdb's generate_series takes integers`, { reason: 'unsupported' });
  const exprs: Expr[] = bound.map((e) => coerce(env.ctx, e, target, 'implicit'));
  return { kind: 'function_scan', fn: 'generate_series', args: exprs, columns: [{ name, type: target, nullable: false }] };
}
