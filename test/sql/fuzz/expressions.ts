import type { Rand } from './random.js';
import type { FuzzColumn, FuzzTable } from './schema.js';

/**
 * Typed scalar expressions over column references: the generator asks for an expression of a kind
 * and gets one of that kind (so PostgreSQL accepts nearly all of them), tagging the features used.
 */

export type Kind = FuzzColumn['kind'];

export interface Ref {
  readonly sql: string;
  readonly kind: Kind;
}

/** Collects the feature tags of one statement (for the per-feature refusal report). */
export class Features {
  readonly tags = new Set<string>();
  add(tag: string): void {
    this.tags.add(tag);
  }
}

export const refsOf = (table: FuzzTable, alias: string | null): Ref[] =>
  table.columns.map((c) => ({ sql: alias ? `${alias}.${c.name}` : c.name, kind: c.kind }));

const WORDS = ['ann', 'bob', 'Cy', 'a%', '%e%', 'x', '', 'sale', 'login'];

export function literal(r: Rand, kind: Kind, f: Features): string {
  switch (kind) {
    case 'int':
      return String(r.int(-3, 12));
    case 'numeric':
      return r.pick(['1000.25', '0', '2.5', '4000', '-1.75', '7000.00']);
    case 'float':
      return r.pick(['0.5', '-1', '2', '1.25', '0']);
    case 'text':
      return `'${r.pick(WORDS)}'`;
    case 'bool':
      return r.pick(['true', 'false']);
    case 'timestamptz':
      if (r.chance(0.4)) {
        f.add('typed-literal.timestamptz');
        return `TIMESTAMPTZ '2023-0${r.int(1, 9)}-15 12:00:00+00'`;
      }
      return `'2023-0${r.int(1, 9)}-15 12:00:00+00'::timestamptz`;
    case 'timestamp':
      if (r.chance(0.4)) {
        f.add('typed-literal.timestamp');
        return `TIMESTAMP '2024-0${r.int(1, 3)}-10 00:00:00'`;
      }
      return `'2024-0${r.int(1, 3)}-10'::timestamp`;
    case 'date':
      if (r.chance(0.4)) {
        f.add('typed-literal.date');
        return `DATE '198${r.int(0, 9)}-06-01'`;
      }
      return `'198${r.int(0, 9)}-06-01'::date`;
    case 'jsonb':
      f.add('jsonb.literal');
      return r.pick([`'{"a": 1}'::jsonb`, `'[1, 2]'::jsonb`, `JSONB '{"a": 2}'`, `'{"a": 1.0}'::jsonb`, `'null'::jsonb`]);
  }
}

const refOfKind = (r: Rand, refs: readonly Ref[], kinds: readonly Kind[]): Ref | undefined => {
  const matching = refs.filter((x) => kinds.includes(x.kind));
  return matching.length === 0 ? undefined : r.pick(matching);
};

/** A leaf: a column of the kind when there is one, else a literal. */
function leaf(r: Rand, refs: readonly Ref[], kind: Kind, f: Features): string {
  const ref = r.chance(0.75) ? refOfKind(r, refs, [kind]) : undefined;
  return ref ? ref.sql : literal(r, kind, f);
}

/** A numeric-valued expression (int, numeric or float). */
export function numExpr(r: Rand, refs: readonly Ref[], f: Features, depth = 0): string {
  const kind = r.pick<Kind>(['int', 'int', 'numeric', 'float']);
  if (depth >= 2 || r.chance(0.4)) return leaf(r, refs, kind, f);
  const a = numExpr(r, refs, f, depth + 1);
  const b = numExpr(r, refs, f, depth + 1);
  switch (r.int(0, 9)) {
    case 0:
      f.add('expr.abs');
      return `abs(${a})`;
    case 1:
      f.add('expr.coalesce');
      return `COALESCE(${a}, ${b})`;
    case 2:
      f.add('expr.case');
      return `CASE WHEN ${boolExpr(r, refs, f, depth + 1)} THEN ${a} ELSE ${b} END`;
    case 3:
      f.add('expr.cast');
      return `CAST(${a} AS ${r.pick(['NUMERIC', 'BIGINT', 'DOUBLE PRECISION', 'NUMERIC(12,1)'])})`;
    case 4:
      f.add('expr.round');
      return `round(${leaf(r, refs, 'numeric', f)}, ${r.int(0, 2)})`;
    case 5:
      f.add('expr.nullif');
      return `NULLIF(${a}, ${b})`;
    case 6:
      f.add('expr.mod');
      return `(${leaf(r, refs, 'int', f)} % ${r.int(2, 5)})`;
    case 7:
      f.add('expr.greatest');
      return `${r.pick(['GREATEST', 'LEAST'])}(${a}, ${b})`;
    default:
      f.add('expr.arith');
      return `(${a} ${r.pick(['+', '-', '*'])} ${b})`;
  }
}

/** A text-valued expression. */
export function textExpr(r: Rand, refs: readonly Ref[], f: Features, depth = 0): string {
  if (depth >= 2 || r.chance(0.35)) return leaf(r, refs, 'text', f);
  const a = textExpr(r, refs, f, depth + 1);
  f.add('string');
  switch (r.int(0, 11)) {
    case 0:
      return `upper(${a})`;
    case 1:
      return `lower(${a})`;
    case 2:
      return `(${a} || ${textExpr(r, refs, f, depth + 1)})`;
    case 3:
      return `substr(${a}, ${r.int(1, 3)}, ${r.int(1, 3)})`;
    case 4:
      return `replace(${a}, '${r.pick(['a', 'o', 'e'])}', 'X')`;
    case 5:
      f.add('string.pad');
      return `${r.pick(['lpad', 'rpad'])}(${a}, ${r.int(2, 6)}, '*')`;
    case 6:
      return `trim(${r.pick(['', 'BOTH ', 'LEADING '])}${r.chance(0.5) ? "'a' FROM " : ''}${a})`;
    case 7:
      f.add('string.concat-fn');
      return `concat(${a}, '-', ${numExpr(r, refs, f, depth + 1)})`;
    case 8:
      return `CAST(${numExpr(r, refs, f, depth + 1)} AS TEXT)`;
    case 9:
      f.add('string.left-right');
      return `${r.pick(['left', 'right'])}(${a}, ${r.int(1, 3)})`;
    case 10:
      f.add('string.split_part');
      return `split_part(${a} || ',z', ',', ${r.int(1, 2)})`;
    default:
      return `COALESCE(${a}, 'none')`;
  }
}

const CMP = ['=', '<>', '<', '<=', '>', '>='];

/** A boolean expression: comparisons, three-valued logic, IN/BETWEEN/LIKE, IS [NOT] DISTINCT FROM. */
export function boolExpr(r: Rand, refs: readonly Ref[], f: Features, depth = 0): string {
  if (depth < 2 && r.chance(0.3)) {
    f.add('where.3vl');
    const a = boolExpr(r, refs, f, depth + 1);
    const b = boolExpr(r, refs, f, depth + 1);
    return r.pick([`(${a} AND ${b})`, `(${a} OR ${b})`, `NOT (${a})`, `(${a}) IS ${r.pick(['TRUE', 'NOT TRUE', 'UNKNOWN', 'FALSE'])}`]);
  }
  if (refs.length === 0) return `${numExpr(r, refs, f, depth + 1)} ${r.pick(CMP)} ${numExpr(r, refs, f, depth + 1)}`;
  const ref = r.pick(refs);
  switch (r.int(0, 8)) {
    case 0:
      return `${ref.sql} IS ${r.pick(['', 'NOT '])}NULL`;
    case 1:
      f.add('where.in');
      return `${ref.sql} ${r.pick(['IN', 'NOT IN'])} (${literal(r, ref.kind, f)}, ${r.chance(0.3) ? 'NULL' : literal(r, ref.kind, f)})`;
    case 2:
      f.add('where.between');
      return ref.kind === 'bool' || ref.kind === 'jsonb'
        ? `${ref.sql} IS NOT NULL`
        : `${ref.sql} BETWEEN ${literal(r, ref.kind, f)} AND ${literal(r, ref.kind, f)}`;
    case 3:
      f.add('where.like');
      return `${leaf(r, refs, 'text', f)} ${r.pick(['LIKE', 'NOT LIKE', 'ILIKE'])} '${r.pick(['a%', '%o%', '_e%', 'C%'])}'`;
    case 4:
      f.add('where.distinct-from');
      return `${ref.sql} IS ${r.pick(['', 'NOT '])}DISTINCT FROM ${literal(r, ref.kind, f)}`;
    case 5:
      return `${numExpr(r, refs, f, depth + 1)} ${r.pick(CMP)} ${numExpr(r, refs, f, depth + 1)}`;
    case 6:
      return ref.kind === 'bool' ? ref.sql : ref.kind === 'jsonb' ? `${ref.sql} ? 'a'` : `${ref.sql} ${r.pick(CMP)} ${literal(r, ref.kind, f)}`;
    case 7:
      f.add('where.paren-is-null');
      return `(${ref.sql} IS NULL) = ${r.pick(['true', 'false'])}`;
    default:
      return `${textExpr(r, refs, f, depth + 1)} ${r.pick(CMP)} ${literal(r, 'text', f)}`;
  }
}

/** An expression of any kind, with the kind it has. */
export function anyExpr(r: Rand, refs: readonly Ref[], f: Features): Ref {
  switch (r.int(0, refs.length === 0 ? 2 : 4)) {
    case 0:
      return { sql: numExpr(r, refs, f), kind: 'numeric' };
    case 1:
      return { sql: textExpr(r, refs, f), kind: 'text' };
    case 2:
      return { sql: boolExpr(r, refs, f), kind: 'bool' };
    default:
      return r.pick(refs);
  }
}
