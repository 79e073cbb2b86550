import { BOOL, constant, TEXT, UNKNOWN, type Expr } from '../plan/expr.js';
import type { ArrayExpr, CaseExpr, CollateExpr, ColumnRef, MinMaxCoalesce, SqlExpr, SqlValueFunction, TypeCast } from '../parse/ast/index.js';
import { asCondition, callByName, coerce, unify } from './coerce.js';
import { invalid, mismatch } from './context.js';
import type { BindFn, ExprEnv } from './env.js';
import { exactNumber, numericConstantText, typedLiteral } from './literals.js';
import {
  bindAndOr,
  bindBetween,
  bindBoolTest,
  bindDistinctFrom,
  bindInList,
  bindLike,
  bindNot,
  bindNullTest,
  bindOperator,
  bindQuantified,
} from './operators.js';
export { negate } from './operators.js';
import { bindSublink } from './sublinks.js';
import { bindIndirection } from './subscript.js';
import { bindTypeName } from './type-names.js';
import { refuseWholeRow, scalarWholeRow } from './whole-row.js';
import { SvcError } from '../../core/errors.js';
import type { Scope } from './scope.js';

export type { ExprEnv } from './env.js';

/** Binds one expression. */
export function bindExpr(node: SqlExpr, env: ExprEnv): Expr {
  const bind: BindFn = (n) => bindExpr(n, env);
  switch (node.kind) {
    case 'column_ref':
      return bindColumnRef(node, env);
    case 'number':
      return exactNumber(env.ctx, node.text);
    case 'string':
      return constant(UNKNOWN, node.value);
    case 'bit_string':
      throw invalid('bit string constants are not supported', { reason: 'unsupported' });
    case 'bool':
      return constant(BOOL, node.value);
    case 'null':
      return constant(UNKNOWN, null);
    case 'param':
      return bindParam(node.number, env);
    case 'op': {
      const folded = node.left === null && node.op === '-' ? numericConstantText(node) : null;
      return folded !== null ? exactNumber(env.ctx, folded) : bindOperator(node, env, bind);
    }
    case 'and':
    case 'or':
      return bindAndOr(node.kind, node.args, env, bind);
    case 'not':
      return bindNot(node.arg, env, bind);
    case 'is_null':
      return bindNullTest(node, env, bind);
    case 'is_bool':
      return bindBoolTest(node, env, bind);
    case 'distinct_from':
      return bindDistinctFrom(node, env, bind);
    case 'between':
      return bindBetween(node, env, bind);
    case 'in_list':
      return bindInList(node, env, bind);
    case 'like':
      return bindLike(node, env, bind);
    case 'quantified':
      return bindQuantified(node, env, bind);
    case 'sublink':
      return bindSublink(node, env, bind);
    case 'func':
      return env.bindFunction(node, env);
    case 'sql_value':
      return bindSqlValue(node, env);
    case 'case':
      return bindCase(node, env);
    case 'coalesce':
    case 'greatest':
    case 'least':
    case 'nullif':
      return bindMinMaxCoalesce(node, env);
    case 'cast':
      return bindCast(node, env);
    case 'array':
      return bindArray(node, env);
    case 'row':
      throw invalid('row constructors are not supported here', { reason: 'unsupported' });
    case 'indirection':
      return bindIndirection(node, env, bind);
    case 'collate':
      return bindCollate(node, env);
    case 'default':
      throw invalid('DEFAULT is not allowed in this context');
  }
}

function bindColumnRef(node: ColumnRef, env: ExprEnv): Expr {
  if (node.column === null) throw invalid('"*" is not allowed in this context');
  if (node.qualifier.length > 2) throw invalid(`improper qualified name (too many dotted names): ${[...node.qualifier, node.column].join('.')}`);
  const column = node.column;
  const table = node.qualifier.length === 0 ? null : node.qualifier[node.qualifier.length - 1]!;
  let found: ReturnType<Scope['resolve']>;
  try {
    found = env.scope.resolve(table, column);
  } catch (e) {
    // Only a name that is no column at all (an ambiguous one keeps its own error).
    if (table === null && e instanceof SvcError && e.code === 'COLUMN_NOT_FOUND') {
      const scalar = scalarWholeRow(column, env.scope, node.loc);
      if (scalar) return bindColumnRef(scalar, env);
      refuseWholeRow(column, env.scope);
    }
    throw e;
  }
  const { type } = found.column;
  const override = table === null && found.depth === 0 ? env.scope.usingOverrides.get(found.index) : undefined;
  if (override) return override;
  if (found.depth === 0) return { kind: 'column', type, index: found.index, name: column };
  return { kind: 'outer', type, depth: found.depth, index: found.index, name: column };
}

function bindParam(n: number, env: ExprEnv): Expr {
  if (!Number.isInteger(n) || n < 1) throw invalid(`invalid parameter reference $${String(n)}`);
  const index = n - 1;
  return { kind: 'param', index, type: env.ctx.paramType(index) ?? UNKNOWN };
}

function bindCase(node: CaseExpr, env: ExprEnv): Expr {
  const subject = node.subject ? bindExpr(node.subject, env) : null;
  const whens = node.whens.map((arm) => {
    const value = bindExpr(arm.when, env);
    const cond = subject ? callByName(env.ctx, '=', [subject, value], true) : asCondition(env.ctx, value, 'CASE/WHEN');
    return { cond, result: bindExpr(arm.then, env) };
  });
  const otherwise = node.otherwise ? bindExpr(node.otherwise, env) : constant(UNKNOWN, null);
  const unified = unify(env.ctx, [...whens.map((w) => w.result), otherwise], 'CASE');
  const results = unified.exprs;
  return {
    kind: 'case',
    type: unified.type,
    whens: whens.map((w, i) => ({ cond: w.cond, result: results[i]! })),
    otherwise: results[results.length - 1]!,
  };
}

/** COALESCE, GREATEST, LEAST and NULLIF: PostgreSQL's own nodes, bound as before they had them. */
function bindMinMaxCoalesce(node: MinMaxCoalesce, env: ExprEnv): Expr {
  const args = node.args.map((a) => bindExpr(a, env));
  if (node.kind === 'nullif') {
    if (args.length !== 2) throw mismatch('function nullif requires two arguments');
    const [a, b] = args as [Expr, Expr];
    const cond = callByName(env.ctx, '=', [a, b], true);
    const type = a.type.name === 'unknown' ? TEXT : a.type;
    return { kind: 'case', type, whens: [{ cond, result: constant(type, null) }], otherwise: coerce(env.ctx, a, type, 'implicit') };
  }
  const unified = unify(env.ctx, args, node.kind.toUpperCase());
  if (node.kind === 'coalesce') return { kind: 'coalesce', type: unified.type, args: unified.exprs };
  return { kind: 'minmax', type: unified.type, args: unified.exprs, greatest: node.kind === 'greatest', compare: env.ctx.types.comparator(unified.type) };
}

function bindCast(node: TypeCast, env: ExprEnv): Expr {
  const type = bindTypeName(env.ctx, node.type);
  if (node.arg.kind === 'string' && (node.literal || node.intervalFields !== null)) {
    return typedLiteral(env.ctx, type, node.arg.value, node.intervalFields);
  }
  if (node.intervalFields !== null) throw invalid('interval field qualifiers are supported on literals only', { reason: 'unsupported' });
  if (node.arg.kind === 'array' && node.arg.elements.length === 0 && type.name === 'array') return constant(type, []);
  return coerce(env.ctx, bindExpr(node.arg, env), type, 'explicit');
}

/** ARRAY[a, b]; ARRAY[[1, 2], [3, 4]] is a two-dimensional int4[] (PostgreSQL has no arrays of arrays). */
function bindArray(node: ArrayExpr, env: ExprEnv): Expr {
  if (node.elements.length === 0) return constant({ name: 'array', element: TEXT }, []);
  const nested = node.elements.every((e) => e.kind === 'array');
  const elements = node.elements.map((e) => bindExpr(e, env));
  const unified = unify(env.ctx, elements, 'ARRAY');
  if (nested) {
    if (unified.type.name !== 'array') throw mismatch('multidimensional arrays must have array expressions with matching dimensions');
    return { kind: 'array', type: unified.type, elements: unified.exprs };
  }
  return { kind: 'array', type: { name: 'array', element: unified.type }, elements: unified.exprs };
}

/** CURRENT_DATE, CURRENT_TIMESTAMP, LOCALTIMESTAMP, CURRENT_SCHEMA; the session values svcdb has no notion of are refused. */
function bindSqlValue(node: SqlValueFunction, env: ExprEnv): Expr {
  if (node.precision !== null) throw invalid(`${node.name}(${node.precision}) with a precision is not supported`, { reason: 'unsupported' });
  switch (node.name) {
    case 'current_timestamp':
      return callByName(env.ctx, 'now', [], false);
    case 'current_date':
    case 'localtimestamp':
      return callByName(env.ctx, node.name, [], false);
    case 'current_schema':
      return constant(TEXT, 'public');
    default:
      throw invalid(`${node.name} is not supported`, { reason: 'unsupported', function: node.name });
  }
}

/** COLLATE "C" / "POSIX" / "default" is svcdb's only collation (byte order): accepted and ignored. */
function bindCollate(node: CollateExpr, env: ExprEnv): Expr {
  const arg = bindExpr(node.arg, env);
  const t = arg.type.name;
  if (t !== 'text' && t !== 'varchar' && t !== 'char' && t !== 'unknown') {
    throw mismatch(`collations are not supported by type ${env.ctx.types.typeText(arg.type).toLowerCase()}`);
  }
  if (node.collation !== 'C' && node.collation !== 'POSIX' && node.collation !== 'default') {
    throw invalid(`collation "${node.collation}" is not supported`, { reason: 'unsupported', collation: node.collation });
  }
  return arg;
}
