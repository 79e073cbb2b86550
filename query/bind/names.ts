import { EXTRACT_FN, type AstNode } from '../parse/index.js';

/** An identifier from node-sql-parser's various shapes (string, {value}, {expr:{value}}). */
export function identName(node: unknown): string {
  if (typeof node === 'string') return node;
  if (node && typeof node === 'object') {
    const n = node as AstNode;
    if (typeof n.value === 'string') return n.value;
    if (n.expr && typeof n.expr === 'object') return identName(n.expr);
  }
  return String(node);
}

/** The lower-case function name of a function node. */
export function functionName(node: AstNode): { schema: string | null; name: string } {
  const name = node.name;
  if (typeof name === 'string') return { schema: null, name: name.toLowerCase() };
  const parts: AstNode[] = name?.name ?? [];
  const last = parts[parts.length - 1];
  const schema = name?.schema ? identName(name.schema) : null;
  const text = last ? identName(last) : '';
  return { schema, name: last?.type === 'double_quote_string' ? text : text.toLowerCase() };
}

/**
 * PostgreSQL's output name of a select-list expression without an alias: the column name, the
 * function name, the type name of a cast, CASE -> "case", otherwise "?column?".
 */
export function outputName(expr: AstNode): string {
  switch (expr.type) {
    case 'column_ref':
      return expr.column === '*' ? '?column?' : identName(expr.column);
    case 'function': {
      const { name } = functionName(expr);
      if (name === '__svc_num' || name === '__svc_op') return '?column?';
      if (name === EXTRACT_FN) return 'extract';
      if (name === 'current_timestamp' || name === 'current_date' || name === 'current_time') return name;
      return name;
    }
    case 'aggr_func':
    case 'window_func':
      return String(expr.name).toLowerCase();
    case 'cast': {
      const inner = expr.expr as AstNode;
      if (inner.type === 'column_ref' || inner.type === 'function' || inner.type === 'aggr_func' || inner.type === 'cast') return outputName(inner);
      return castTypeName(expr.target?.[0]);
    }
    case 'case':
      return 'case';
    case 'array':
      return 'array';
    case 'interval':
      return 'interval';
    case 'date':
      return 'date';
    case 'timestamp':
      return 'timestamp';
    default:
      if (expr.ast) return subqueryName(expr.ast as AstNode);
      return '?column?';
  }
}

function subqueryName(ast: AstNode): string {
  const first = ast.columns?.[0];
  if (!first || ast.columns.length !== 1) return '?column?';
  if (first.as) return typeof first.as === 'string' ? first.as : identName(first.as);
  return outputName(first.expr);
}

/** PostgreSQL names a cast of a literal after the type: int4, text, numeric, ... */
function castTypeName(target: AstNode | undefined): string {
  const t = String(target?.dataType ?? '').toLowerCase();
  const map: Record<string, string> = {
    int: 'int4',
    integer: 'int4',
    int4: 'int4',
    bigint: 'int8',
    int8: 'int8',
    smallint: 'int2',
    int2: 'int2',
    text: 'text',
    varchar: 'varchar',
    'character varying': 'varchar',
    char: 'bpchar',
    character: 'bpchar',
    numeric: 'numeric',
    decimal: 'numeric',
    real: 'float4',
    float4: 'float4',
    'double precision': 'float8',
    float8: 'float8',
    float: 'float8',
    boolean: 'bool',
    bool: 'bool',
    date: 'date',
    timestamp: 'timestamp',
    timestamptz: 'timestamptz',
    jsonb: 'jsonb',
    json: 'json',
    uuid: 'uuid',
    interval: 'interval',
  };
  if (target?.array) return `${map[t] ?? t}`;
  if (t === 'timestamp' && (target?.suffix ?? []).join(' ').toLowerCase().includes('with time zone')) return 'timestamptz';
  return map[t] ?? t;
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
