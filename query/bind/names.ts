import type { QueryExpr, SqlExpr } from '../parse/ast/index.js';

/**
 * PostgreSQL's output name of a select-list expression without an alias (FigureColname in
 * parse_target.c): the column name, the function name, the type name of a cast of something
 * nameless, 'case', 'array', 'exists', 'coalesce', ..., otherwise "?column?".
 */
export function outputName(expr: SqlExpr): string {
  return figure(expr)?.name ?? '?column?';
}

/** A name and its strength: 2 for a real name (column, function), 1 for a fallback a cast may replace. */
interface Figured {
  readonly name: string;
  readonly strength: 1 | 2;
}

function figure(expr: SqlExpr): Figured | null {
  switch (expr.kind) {
    case 'column_ref':
      return expr.column === null ? null : strong(expr.column);
    case 'indirection': {
      const field = [...expr.steps].reverse().find((s) => s.kind === 'field');
      return field?.kind === 'field' ? strong(field.name) : figure(expr.arg);
    }
    case 'func':
      return strong(expr.name.name);
    case 'nullif':
    case 'coalesce':
    case 'greatest':
    case 'least':
      return strong(expr.kind);
    case 'sql_value':
      return strong(expr.name);
    case 'array':
      return strong('array');
    case 'row':
      return strong('row');
    case 'sublink':
      return sublinkName(expr.mode, expr.query);
    case 'case': {
      const inner = expr.otherwise === null ? null : figure(expr.otherwise);
      return inner !== null && inner.strength === 2 ? inner : { name: 'case', strength: 1 };
    }
    case 'cast': {
      const inner = figure(expr.arg);
      return inner !== null && inner.strength === 2 ? inner : { name: expr.type.name, strength: 1 };
    }
    case 'collate':
      return figure(expr.arg);
    default:
      return null;
  }
}

function strong(name: string): Figured {
  return { name, strength: 2 };
}

function sublinkName(mode: string, query: QueryExpr): Figured | null {
  if (mode === 'exists') return strong('exists');
  if (mode === 'array') return strong('array');
  if (mode !== 'scalar') return null;
  return strong(firstColumnName(query));
}

/** The name of a query's first output column, as the query itself would name it. */
function firstColumnName(query: QueryExpr): string {
  if (query.kind === 'set_op') return firstColumnName(query.left);
  if (query.kind === 'values') return 'column1';
  const first = query.targets[0];
  if (!first) return '?column?';
  if (first.alias !== null) return first.alias;
  if (first.expr.kind === 'column_ref' && first.expr.column === null) return '?column?';
  return outputName(first.expr);
}

/** Makes names unique: the second "x" becomes "x_2", the third "x_3" (skipping names in use). */
export function uniqueNames(names: readonly string[]): string[] {
  const used = new Set<string>();
  const out: string[] = [];
  for (const name of names) {
    let candidate = name;
    for (let n = 2; used.has(candidate); n++) candidate = `${name}_${n}`;
    used.add(candidate);
    out.push(candidate);
  }
  return out;
}
