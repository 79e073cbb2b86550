import { assert, fail, SvcError } from '../../core/errors.js';
import type { QValue, ResolvedFunction } from '../types/contract.js';
import type { Expr, SubqueryExpr } from '../plan/expr.js';
import type { ExecContext, Row, SubResult } from './context.js';
import { enterDeadline, leaveDeadline, readsDeadline } from '../functions/regex-guard.js';

/** An expression compiled to a closure over one execution's context. */
export type Evaluator = (row: Row) => QValue;

export interface Compiled {
  readonly eval: Evaluator;
  /** Subqueries the expression reads: their results must be in ctx.subResults before eval. */
  readonly subqueries: readonly SubqueryExpr[];
}

/** The error of a statement that reads $n (index n - 1) when fewer parameters were given. */
export function missingParameter(index: number): SvcError {
  return new SvcError('INVALID_QUERY', `there is no parameter $${index + 1}`, { parameter: index + 1 });
}

/** Compiles an expression; subquery nodes are collected for the operator to prepare. */
export function compile(expr: Expr, ctx: ExecContext): Compiled {
  const subqueries: SubqueryExpr[] = [];
  const evaluator = build(expr, ctx, subqueries);
  return { eval: evaluator, subqueries };
}

function build(expr: Expr, ctx: ExecContext, subs: SubqueryExpr[]): Evaluator {
  const b = (e: Expr): Evaluator => build(e, ctx, subs);
  switch (expr.kind) {
    case 'const': {
      const value = expr.value;
      return () => value;
    }
    case 'param': {
      const index = expr.index;
      // An execution's parameters never change: read once, not per row (a missing one still fails only when evaluated).
      if (index < ctx.params.length) {
        const value = ctx.params[index]!;
        return () => value;
      }
      return () => {
        throw missingParameter(index);
      };
    }
    case 'column': {
      const index = expr.index;
      return (row) => row[index] as QValue;
    }
    case 'outer': {
      const { depth, index } = expr;
      return () => ctx.outer[depth - 1]![index] as QValue;
    }
    case 'call':
      return withDeadline(expr.fn, ctx, plainComparison(expr.fn, expr.args.map(b)) ?? buildCall(expr.fn.impl, expr.fn.strict, expr.args.map(b)));
    case 'cast': {
      const arg = b(expr.arg);
      const cast = expr.cast;
      return (row) => {
        const v = arg(row);
        return v === null ? null : cast(v);
      };
    }
    case 'and':
      return buildAnd(expr.args.map(b));
    case 'or':
      return buildOr(expr.args.map(b));
    case 'not': {
      const arg = b(expr.arg);
      return (row) => {
        const v = arg(row);
        return v === null ? null : !v;
      };
    }
    case 'is_null': {
      const arg = b(expr.arg);
      const negated = expr.negated;
      return (row) => (arg(row) === null) !== negated;
    }
    case 'is_bool': {
      const arg = b(expr.arg);
      const { value, negated } = expr;
      return (row) => (arg(row) === value) !== negated;
    }
    case 'case':
      return buildCase(
        expr.whens.map((w) => [b(w.cond), b(w.result)] as const),
        b(expr.otherwise),
      );
    case 'coalesce': {
      const args = expr.args.map(b);
      return (row) => {
        for (const a of args) {
          const v = a(row);
          if (v !== null) return v;
        }
        return null;
      };
    }
    case 'minmax': {
      const args = expr.args.map(b);
      const { compare, greatest } = expr;
      return (row) => {
        let best: QValue = null;
        for (const a of args) {
          const v = a(row);
          if (v !== null && (best === null || (greatest ? compare(v, best) > 0 : compare(v, best) < 0))) best = v;
        }
        return best;
      };
    }
    case 'in_list':
      return buildInList(
        b(expr.arg),
        expr.list.map(b),
        expr.eq.map((f) => f.impl),
        expr.negated,
      );
    case 'distinct_from': {
      const l = b(expr.left);
      const r = b(expr.right);
      const eq = expr.eq.impl;
      const negated = expr.negated;
      return (row) => {
        const a = l(row);
        const c = r(row);
        const distinct = a === null || c === null ? a !== c : eq([a, c]) !== true;
        return distinct !== negated;
      };
    }
    case 'array': {
      const elements = expr.elements.map(b);
      return (row) => elements.map((e) => e(row));
    }
    case 'quantified':
      return withDeadline(expr.op, ctx, buildQuantified(b(expr.arg), b(expr.array), expr.op.impl, expr.op.strict, expr.all));
    case 'subquery': {
      subs.push(expr);
      if (expr.tuple)
        return buildTupleIn(
          expr,
          ctx,
          expr.tuple.map((t) => b(t.left)),
        );
      if (expr.mode === 'in' || expr.mode === 'any' || expr.mode === 'all')
        return withDeadline(expr.test!.op, ctx, buildSubqueryTest(expr, ctx, b(expr.test!.left)));
      // ARRAY(SELECT ...): the subquery's column, in its order, as one array value.
      if (expr.mode === 'array') return () => (lookup(ctx, expr) as { values: readonly QValue[] }).values;
      return () => (lookup(ctx, expr) as { value: QValue }).value;
    }
    case 'agg':
    case 'window':
      fail(`${expr.kind} left in an expression after planning`);
  }
}

function lookup(ctx: ExecContext, sq: SubqueryExpr): SubResult {
  const found = sq.correlated ? ctx.subResults.get(sq.id) : ctx.statementCache.get(sq.id);
  assert(found, `subquery ${sq.id} not prepared`);
  return found;
}

/** Types whose comparison (query/types/compare.ts) is JavaScript's own < on numbers or bigints of one type. */
const PLAIN_ORDER = new Set(['int2', 'int4', 'date', 'int8', 'timestamp', 'timestamptz']);

/**
 * A comparison of two values of one plainly ordered type as a direct closure: the WHERE of a scan
 * runs it per row, and the generic call (argument array, comparator, test) costs several times more.
 * null: not such a comparison.
 */
function plainComparison(fn: ResolvedFunction, args: Evaluator[]): Evaluator | null {
  const [t0, t1] = fn.argTypes;
  if (args.length !== 2 || !fn.strict || !t0 || !t1 || t0.name !== t1.name || !PLAIN_ORDER.has(t0.name)) return null;
  const [a0, a1] = args as [Evaluator, Evaluator];
  // One closure per operator (not a shared one calling a test): each stays monomorphic and inlines.
  switch (fn.name) {
    case '=':
      return (row) => {
        const x = a0(row);
        const y = a1(row);
        return x === null || y === null ? null : x === y;
      };
    case '<>':
    case '!=':
      return (row) => {
        const x = a0(row);
        const y = a1(row);
        return x === null || y === null ? null : x !== y;
      };
    case '<':
      return (row) => {
        const x = a0(row);
        const y = a1(row);
        return x === null || y === null ? null : (x as number) < (y as number);
      };
    case '<=':
      return (row) => {
        const x = a0(row);
        const y = a1(row);
        return x === null || y === null ? null : (x as number) <= (y as number);
      };
    case '>':
      return (row) => {
        const x = a0(row);
        const y = a1(row);
        return x === null || y === null ? null : (x as number) > (y as number);
      };
    case '>=':
      return (row) => {
        const x = a0(row);
        const y = a1(row);
        return x === null || y === null ? null : (x as number) >= (y as number);
      };
    default:
      return null;
  }
}

/**
 * A call of a regex function or operator (`x ~ p`, `x ~ ANY(…)`, regexp_replace…), evaluated with
 * the statement's deadline set: a match that may backtrack stops there (functions/regex-guard.ts).
 * Any other call as it is.
 */
function withDeadline(fn: ResolvedFunction, ctx: ExecContext, evaluate: Evaluator): Evaluator {
  if (!readsDeadline(fn.name, fn.argTypes)) return evaluate;
  const deadlineMs = ctx.deadlineMs;
  return (row) => {
    const outer = enterDeadline(deadlineMs);
    try {
      return evaluate(row);
    } finally {
      leaveDeadline(outer);
    }
  };
}

function buildCall(impl: (args: readonly QValue[]) => QValue, strict: boolean, args: Evaluator[]): Evaluator {
  if (args.length === 2) {
    const [a0, a1] = args as [Evaluator, Evaluator];
    return (row) => {
      const x = a0(row);
      const y = a1(row);
      if (strict && (x === null || y === null)) return null;
      return impl([x, y]);
    };
  }
  return (row) => {
    const values = args.map((a) => a(row));
    if (strict && values.some((v) => v === null)) return null;
    return impl(values);
  };
}

function buildAnd(args: Evaluator[]): Evaluator {
  return (row) => {
    let sawNull = false;
    for (const a of args) {
      const v = a(row);
      if (v === false) return false;
      if (v === null) sawNull = true;
    }
    return sawNull ? null : true;
  };
}

function buildOr(args: Evaluator[]): Evaluator {
  return (row) => {
    let sawNull = false;
    for (const a of args) {
      const v = a(row);
      if (v === true) return true;
      if (v === null) sawNull = true;
    }
    return sawNull ? null : false;
  };
}

function buildCase(whens: readonly (readonly [Evaluator, Evaluator])[], otherwise: Evaluator): Evaluator {
  return (row) => {
    for (const [cond, result] of whens) if (cond(row) === true) return result(row);
    return otherwise(row);
  };
}

function buildInList(arg: Evaluator, list: Evaluator[], eqs: ((args: readonly QValue[]) => QValue)[], negated: boolean): Evaluator {
  return (row) => {
    const v = arg(row);
    let result: boolean | null = false;
    if (v === null) result = null;
    else {
      for (let i = 0; i < list.length; i++) {
        const item = list[i]!(row);
        if (item === null) {
          result = null;
          continue;
        }
        if (eqs[i]!([v, item]) === true) {
          result = true;
          break;
        }
      }
    }
    return result === null ? null : result !== negated;
  };
}

function buildQuantified(arg: Evaluator, array: Evaluator, op: (args: readonly QValue[]) => QValue, strict: boolean, all: boolean): Evaluator {
  return (row) => {
    const values = array(row) as readonly QValue[] | null;
    if (values === null) return null;
    return quantify(arg(row), values, (a, b) => (strict && (a === null || b === null) ? null : (op([a, b]) as boolean | null)), all);
  };
}

/** 3VL of `v op ANY/ALL (values)`. */
export function quantify(v: QValue, values: readonly QValue[], test: (a: QValue, b: QValue) => boolean | null, all: boolean): boolean | null {
  let sawNull = false;
  for (const item of values) {
    const r = test(v, item);
    if (r === null) sawNull = true;
    else if (r === !all) return !all;
  }
  if (values.length === 0) return all;
  return sawNull ? null : all;
}

function buildSubqueryTest(sq: SubqueryExpr, ctx: ExecContext, left: Evaluator): Evaluator {
  const test = sq.test!;
  const op = test.op.impl;
  const all = sq.mode === 'all';
  const hash = sq.mode === 'in' ? ctx.types.hashKey(test.op.argTypes[0]!) : null;
  return (row) => {
    const result = lookup(ctx, sq) as Extract<SubResult, { kind: 'set' }>;
    const v = left(row);
    if (hash && result.keys) {
      if (result.values.length === 0) return false;
      if (v === null) return null;
      if (result.keys.has(hash(v))) return true;
      return result.hasNull ? null : false;
    }
    return quantify(v, result.values, (a, b) => (a === null || b === null ? null : (op([a, b]) as boolean | null)), all);
  };
}

/** (a, b) IN (subquery rows): a row matches when every column is equal (NULL when unknown). */
function buildTupleIn(sq: SubqueryExpr, ctx: ExecContext, lefts: Evaluator[]): Evaluator {
  const ops = sq.tuple!.map((t) => t.op.impl);
  return (row) => {
    const result = lookup(ctx, sq) as Extract<SubResult, { kind: 'set' }>;
    const values = lefts.map((l) => l(row));
    return quantify(
      null,
      result.values,
      (_v, candidate) => {
        const tuple = candidate as readonly QValue[];
        let unknown = false;
        for (let i = 0; i < ops.length; i++) {
          const a = values[i]!;
          const c = tuple[i]!;
          if (a === null || c === null) {
            unknown = true;
            continue;
          }
          if (ops[i]!([a, c]) !== true) return false;
        }
        return unknown ? null : true;
      },
      false,
    );
  };
}
