import type { QType, QValue, ResolvedFunction } from '../types/contract.js';
import { INT4, type Expr } from '../plan/expr.js';
import type { Indirection, IndirectionStep, SqlExpr } from '../parse/ast/index.js';
import { callByName, callExpr, coerce } from './coerce.js';
import { invalid, mismatch } from './context.js';
import type { BindFn, ExprEnv } from './env.js';

/**
 * `arr[i]`, `arr[a:b]`, `jsonb['key']`, `(t).col`: PostgreSQL's A_Indirection. Arrays are 1-based;
 * an index out of range, a NULL index, or fewer indexes than the array has dimensions give NULL.
 * Once one step is a slice every step is (a plain `[n]` then means `[1:n]`), as in PostgreSQL.
 */
export function bindIndirection(node: Indirection, env: ExprEnv, bind: BindFn): Expr {
  const fieldAt = node.steps.findIndex((s) => s.kind === 'field' || s.kind === 'star');
  if (fieldAt >= 0) return bindFieldSelection(node, fieldAt, bind);
  const arg = bind(node.arg);
  if (arg.type.name === 'jsonb') return node.steps.reduce((acc, step) => jsonbStep(acc, step, env, bind), arg);
  if (arg.type.name !== 'array' || !arg.type.element) {
    const shown = env.ctx.types.typeText(arg.type).toLowerCase();
    throw mismatch(`cannot subscript type ${shown} because it does not support subscripting`, { type: shown });
  }
  const slice = node.steps.some((s) => s.kind === 'slice');
  const bounds: Expr[] = [];
  const shape: ('i' | 'l' | 'u' | 'lu' | '')[] = [];
  const int = (e: SqlExpr): Expr => subscriptInt(bind(e), env);
  for (const step of node.steps) {
    if (step.kind === 'index') {
      bounds.push(int(step.index));
      shape.push(slice ? 'u' : 'i');
    } else if (step.kind === 'slice') {
      if (step.lower) bounds.push(int(step.lower));
      if (step.upper) bounds.push(int(step.upper));
      shape.push(`${step.lower ? 'l' : ''}${step.upper ? 'u' : ''}`);
    }
  }
  const type = slice ? arg.type : arg.type.element;
  const fn = slice ? sliceFunction(arg.type, shape, bounds) : indexFunction(arg.type, type, bounds);
  return callExpr(env.ctx, fn, [arg, ...bounds], fn.name);
}

function subscriptInt(e: Expr, env: ExprEnv): Expr {
  if (e.type.name === 'int4' || e.type.name === 'unknown') return coerce(env.ctx, e, INT4, 'implicit');
  try {
    return coerce(env.ctx, e, INT4, 'assignment');
  } catch {
    throw mismatch('array subscript must have type integer');
  }
}

/** Multi-dimensional values are nested JS arrays, except jsonb elements whose values may be arrays themselves. */
const nestedElements = (arrayType: QType): boolean => arrayType.element?.name !== 'jsonb';

function indexFunction(arrayType: QType, element: QType, bounds: readonly Expr[]): ResolvedFunction {
  const nested = nestedElements(arrayType);
  return {
    name: `subscript${'[i]'.repeat(bounds.length)}`,
    argTypes: [arrayType, ...bounds.map(() => INT4)],
    returnType: element,
    strict: true,
    immutable: true,
    impl: ([array, ...indexes]) => {
      let cur: QValue | undefined = array;
      for (const i of indexes) {
        if (!Array.isArray(cur)) return null;
        cur = (cur as readonly QValue[])[(i as number) - 1];
        if (cur === undefined) return null;
      }
      // Fewer subscripts than dimensions: PostgreSQL gives NULL, not a sub-array.
      return nested && Array.isArray(cur) ? null : (cur ?? null);
    },
  };
}

function sliceFunction(arrayType: QType, shape: readonly string[], bounds: readonly Expr[]): ResolvedFunction {
  const nested = nestedElements(arrayType);
  return {
    name: `subscript${shape.map((s) => `[${s.includes('l') ? 'l' : ''}:${s.includes('u') ? 'u' : ''}]`).join('')}`,
    argTypes: [arrayType, ...bounds.map(() => INT4)],
    returnType: arrayType,
    strict: true,
    immutable: true,
    impl: ([array, ...values]) => {
      let k = 0;
      const ranges = shape.map((s) => ({ lower: s.includes('l') ? (values[k++] as number) : 1, upper: s.includes('u') ? (values[k++] as number) : null }));
      const out = sliceDims(array as readonly QValue[], ranges, nested);
      return out.length === 0 || out.every((e) => Array.isArray(e) && e.length === 0) ? [] : out;
    },
  };
}

function sliceDims(array: readonly QValue[], ranges: readonly { lower: number; upper: number | null }[], nested: boolean): QValue[] {
  const [range, ...rest] = ranges;
  if (!range) return [...array];
  const lower = Math.max(range.lower, 1);
  const upper = Math.min(range.upper ?? array.length, array.length);
  const picked = lower > upper ? [] : array.slice(lower - 1, upper);
  if (rest.length === 0) return picked;
  if (!nested || !picked.every((e) => Array.isArray(e))) return [];
  return picked.map((e) => sliceDims(e as readonly QValue[], rest, nested));
}

/** jsonb subscripts (PostgreSQL 14): `j['key']` is j -> 'key', `j[0]` is j -> 0. */
function jsonbStep(acc: Expr, step: IndirectionStep, env: ExprEnv, bind: BindFn): Expr {
  if (step.kind !== 'index') throw mismatch('jsonb subscript does not support slices');
  return callByName(env.ctx, '->', [acc, bind(step.index)], true);
}

/** `(t).col` and `t.col` through parentheses: a column of a table in scope; composite values are not supported. */
function bindFieldSelection(node: Indirection, at: number, bind: BindFn): Expr {
  const step = node.steps[at]!;
  if (at !== 0 || step.kind !== 'field' || node.arg.kind !== 'column_ref' || node.arg.column === null) {
    throw invalid('field selection from composite values is not supported', { reason: 'unsupported' });
  }
  const column: SqlExpr = { kind: 'column_ref', qualifier: [...node.arg.qualifier, node.arg.column], column: step.name, loc: node.loc };
  const rest = node.steps.slice(1);
  return bind(rest.length === 0 ? column : { kind: 'indirection', arg: column, steps: rest, loc: node.loc });
}
