import type { QValue } from '../types/contract.js';
import type { Expr } from './expr.js';

const INFIX = new Set([
  '=',
  '<>',
  '<',
  '>',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  '~~',
  '!~~',
  '~~*',
  '!~~*',
  '->',
  '->>',
  '@>',
  '<@',
  '?',
  '<->',
  '<=>',
  '<#>',
  '^',
]);

function literal(value: QValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  if (typeof value === 'bigint' || typeof value === 'number' || typeof value === 'boolean') return String(value);
  // A vector as pgvector prints it (float4 elements at their shortest).
  if (value instanceof Float32Array) return `'[${Array.from(value, (x) => String(Math.fround(x) === x ? Number(x.toPrecision(9)) : x)).join(',')}]'`;
  return `'${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}'`;
}

/** A readable SQL-like rendering of a bound expression, for EXPLAIN (names by row position). */
export function exprText(expr: Expr, names: readonly string[]): string {
  const t = (e: Expr): string => exprText(e, names);
  switch (expr.kind) {
    case 'const':
      return literal(expr.value);
    case 'param':
      return `$${expr.index + 1}`;
    case 'column':
      return names[expr.index] ?? expr.name;
    case 'outer':
      return expr.name;
    case 'call':
      if (expr.args.length === 2 && INFIX.has(expr.label)) return `(${t(expr.args[0]!)} ${expr.label} ${t(expr.args[1]!)})`;
      if (expr.args.length === 1 && expr.label === '-') return `(- ${t(expr.args[0]!)})`;
      return `${expr.label}(${expr.args.map(t).join(', ')})`;
    case 'cast':
      return `(${t(expr.arg)})::${expr.type.name}`;
    case 'and':
    case 'or':
      return `(${expr.args.map(t).join(` ${expr.kind.toUpperCase()} `)})`;
    case 'not':
      return `(NOT ${t(expr.arg)})`;
    case 'is_null':
      return `(${t(expr.arg)} IS ${expr.negated ? 'NOT ' : ''}NULL)`;
    case 'is_bool':
      return `(${t(expr.arg)} IS ${expr.negated ? 'NOT ' : ''}${expr.value === null ? 'UNKNOWN' : String(expr.value).toUpperCase()})`;
    case 'case':
      return `CASE ${expr.whens.map((w) => `WHEN ${t(w.cond)} THEN ${t(w.result)}`).join(' ')} ELSE ${t(expr.otherwise)} END`;
    case 'coalesce':
      return `COALESCE(${expr.args.map(t).join(', ')})`;
    case 'minmax':
      return `${expr.greatest ? 'GREATEST' : 'LEAST'}(${expr.args.map(t).join(', ')})`;
    case 'in_list':
      return `(${t(expr.arg)} ${expr.negated ? 'NOT IN' : 'IN'} (${expr.list.map(t).join(', ')}))`;
    case 'distinct_from':
      return `(${t(expr.left)} IS ${expr.negated ? 'NOT ' : ''}DISTINCT FROM ${t(expr.right)})`;
    case 'array':
      return `ARRAY[${expr.elements.map(t).join(', ')}]`;
    case 'quantified':
      return `(${t(expr.arg)} ${expr.op.name} ${expr.all ? 'ALL' : 'ANY'} (${t(expr.array)}))`;
    case 'subquery':
      if (expr.mode === 'exists') return `(EXISTS (SubPlan ${expr.id}))`;
      if (expr.test) return `(${t(expr.test.left)} ${expr.mode === 'in' ? 'IN' : `${expr.test.op.name} ${expr.mode.toUpperCase()}`} (SubPlan ${expr.id}))`;
      return `(SubPlan ${expr.id})`;
    case 'agg':
      return `${expr.call.name}(${expr.call.star ? '*' : expr.call.args.map(t).join(', ')})`;
    case 'window':
      return `${expr.call.fn}() OVER (...)`;
  }
}
