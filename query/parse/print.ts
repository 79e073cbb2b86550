/**
 * SQL text of an owned expression tree: how CHECK and DEFAULT expressions are kept in the catalog
 * (parsed again by parseExpression when a statement needs them). Every operator is parenthesized,
 * so the text means the same tree whatever PostgreSQL's precedences; identifiers are quoted as
 * PostgreSQL's quote_ident does (unless plain lower case and not a keyword).
 */
import { scanSync } from './pg-module.js';
import { SvcError } from '../../core/errors.js';
import type { FrameBound, FuncCall, IndirectionStep, SortItem, SqlExpr, TypeName, WindowFrame, WindowSpec } from './ast/index.js';
import { tokenize } from './tokens.js';

/** The SQL text of an expression, without parentheses around the whole; subqueries are refused (PostgreSQL allows none in CHECK or DEFAULT). */
export function exprSql(expr: SqlExpr): string {
  const text = printExpr(expr);
  return wrapsWhole(text) ? text.slice(1, -1) : text;
}

/** Whether the text's first "(" closes at its last character. */
function wrapsWhole(text: string): boolean {
  if (!text.startsWith('(') || !text.endsWith(')')) return false;
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0 && i < text.length - 1) return false;
  }
  return true;
}

function printExpr(expr: SqlExpr): string {
  switch (expr.kind) {
    case 'number':
      return expr.text.startsWith('-') ? `(${expr.text})` : expr.text;
    case 'string':
      return quoteLiteral(expr.value);
    case 'bit_string':
      return expr.value.startsWith('x') ? `X'${expr.value.slice(1)}'` : `B'${expr.value.replace(/^b/, '')}'`;
    case 'bool':
      return expr.value ? 'TRUE' : 'FALSE';
    case 'null':
      return 'NULL';
    case 'column_ref':
      return [...expr.qualifier.map(quoteIdent), expr.column === null ? '*' : quoteIdent(expr.column)].join('.');
    case 'param':
      return `$${expr.number}`;
    case 'op':
      return expr.left === null ? `(${expr.op} ${printExpr(expr.right)})` : `(${printExpr(expr.left)} ${expr.op} ${printExpr(expr.right)})`;
    case 'and':
    case 'or':
      return `(${expr.args.map(printExpr).join(` ${expr.kind.toUpperCase()} `)})`;
    case 'not':
      return `(NOT ${printExpr(expr.arg)})`;
    case 'is_null':
      return `(${printExpr(expr.arg)} IS ${expr.negated ? 'NOT ' : ''}NULL)`;
    case 'is_bool':
      return `(${printExpr(expr.arg)} IS ${expr.negated ? 'NOT ' : ''}${expr.value === null ? 'UNKNOWN' : expr.value ? 'TRUE' : 'FALSE'})`;
    case 'distinct_from':
      return `(${printExpr(expr.left)} IS ${expr.negated ? 'NOT ' : ''}DISTINCT FROM ${printExpr(expr.right)})`;
    case 'between':
      return `(${printExpr(expr.arg)} ${expr.negated ? 'NOT ' : ''}BETWEEN ${expr.symmetric ? 'SYMMETRIC ' : ''}${printExpr(expr.low)} AND ${printExpr(expr.high)})`;
    case 'in_list':
      return `(${printExpr(expr.arg)} ${expr.negated ? 'NOT ' : ''}IN (${expr.list.map(printExpr).join(', ')}))`;
    case 'like': {
      const verb = expr.similar ? 'SIMILAR TO' : expr.caseInsensitive ? 'ILIKE' : 'LIKE';
      const escape = expr.escape ? ` ESCAPE ${printExpr(expr.escape)}` : '';
      return `(${printExpr(expr.arg)} ${expr.negated ? 'NOT ' : ''}${verb} ${printExpr(expr.pattern)}${escape})`;
    }
    case 'quantified':
      return `(${printExpr(expr.arg)} ${expr.op} ${expr.all ? 'ALL' : 'ANY'} (${printExpr(expr.array)}))`;
    case 'sublink':
      throw new SvcError('INVALID_QUERY', 'cannot use subquery in a stored expression (CHECK or DEFAULT)', { reason: 'unsupported' });
    case 'func':
      return funcSql(expr);
    case 'sql_value':
      return expr.precision === null ? expr.name.toUpperCase() : `${expr.name.toUpperCase()}(${expr.precision})`;
    case 'case': {
      const subject = expr.subject ? ` ${printExpr(expr.subject)}` : '';
      const whens = expr.whens.map((w) => ` WHEN ${printExpr(w.when)} THEN ${printExpr(w.then)}`).join('');
      const otherwise = expr.otherwise ? ` ELSE ${printExpr(expr.otherwise)}` : '';
      return `CASE${subject}${whens}${otherwise} END`;
    }
    case 'coalesce':
    case 'greatest':
    case 'least':
    case 'nullif':
      return `${expr.kind.toUpperCase()}(${expr.args.map(printExpr).join(', ')})`;
    case 'cast':
      return `CAST(${printExpr(expr.arg)} AS ${typeSql(expr.type)}${expr.intervalFields ? ` ${expr.intervalFields.toUpperCase()}` : ''})`;
    case 'array':
      return `ARRAY[${expr.elements.map(printExpr).join(', ')}]`;
    case 'row':
      return `ROW(${expr.items.map(printExpr).join(', ')})`;
    case 'indirection':
      return `(${printExpr(expr.arg)})${expr.steps.map(stepSql).join('')}`;
    case 'collate':
      return `(${printExpr(expr.arg)} COLLATE ${quoteIdent(expr.collation)})`;
    case 'default':
      return 'DEFAULT';
  }
}

/** A type name as PostgreSQL reads it back: `numeric(10, 2)`, `int4[]`, `"my type"`. */
export function typeSql(type: TypeName): string {
  const name = type.schema ? `${quoteIdent(type.schema)}.${quoteIdent(type.name)}` : quoteTypeName(type.name);
  const modifiers = type.modifiers.length > 0 ? `(${type.modifiers.join(', ')})` : '';
  return `${name}${modifiers}${'[]'.repeat(type.arrayBounds)}`;
}

/** A built-in type's name needs no quotes unless it is a reserved word (numeric, int4, timestamptz, bit, ...). */
function quoteTypeName(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) && keywordKind(name) < 4 ? name : quoteIdent(name);
}

function funcSql(call: FuncCall): string {
  const [field, source] = call.args;
  if (call.name.schema === null && call.name.name === 'extract' && call.args.length === 2 && field?.kind === 'string' && /^[a-z_]+$/.test(field.value)) {
    return `EXTRACT(${field.value} FROM ${printExpr(source!)})`;
  }
  const name = call.name.schema ? `${quoteIdent(call.name.schema)}.${quoteIdent(call.name.name)}` : quoteIdent(call.name.name);
  const args = call.star
    ? '*'
    : call.args
        .map((a, i) => {
          const named = call.argNames?.[i];
          const variadic = call.variadic && i === call.args.length - 1 ? 'VARIADIC ' : '';
          return `${named ? `${quoteIdent(named)} => ` : ''}${variadic}${printExpr(a)}`;
        })
        .join(', ');
  const order = call.orderBy.length > 0 ? ` ORDER BY ${sortSql(call.orderBy)}` : '';
  let text = `${name}(${call.distinct ? 'DISTINCT ' : ''}${args}${order})`;
  if (call.withinGroup.length > 0) text += ` WITHIN GROUP (ORDER BY ${sortSql(call.withinGroup)})`;
  if (call.filter) text += ` FILTER (WHERE ${printExpr(call.filter)})`;
  if (call.over) text += ` OVER ${windowSql(call.over)}`;
  return text;
}

function sortSql(items: readonly SortItem[]): string {
  return items
    .map((s) => {
      const direction = s.using ? ` USING ${s.using}` : s.direction ? ` ${s.direction.toUpperCase()}` : '';
      const nulls = s.nulls ? ` NULLS ${s.nulls.toUpperCase()}` : '';
      return `${printExpr(s.expr)}${direction}${nulls}`;
    })
    .join(', ');
}

/** `w` or `(w PARTITION BY ... ORDER BY ... ROWS ...)`. */
export function windowSql(spec: WindowSpec): string {
  if (spec.ref && spec.partitionBy.length === 0 && spec.orderBy.length === 0 && !spec.frame) return quoteIdent(spec.ref);
  const parts: string[] = [];
  if (spec.ref) parts.push(quoteIdent(spec.ref));
  if (spec.partitionBy.length > 0) parts.push(`PARTITION BY ${spec.partitionBy.map(printExpr).join(', ')}`);
  if (spec.orderBy.length > 0) parts.push(`ORDER BY ${sortSql(spec.orderBy)}`);
  if (spec.frame) parts.push(frameSql(spec.frame));
  return `(${parts.join(' ')})`;
}

function frameSql(frame: WindowFrame): string {
  const exclude = frame.exclude === 'no_others' ? '' : ` EXCLUDE ${frame.exclude === 'current_row' ? 'CURRENT ROW' : frame.exclude.toUpperCase()}`;
  return `${frame.mode.toUpperCase()} BETWEEN ${boundSql(frame.start)} AND ${boundSql(frame.end)}${exclude}`;
}

function boundSql(bound: FrameBound): string {
  switch (bound.kind) {
    case 'unbounded_preceding':
      return 'UNBOUNDED PRECEDING';
    case 'unbounded_following':
      return 'UNBOUNDED FOLLOWING';
    case 'current_row':
      return 'CURRENT ROW';
    case 'preceding':
      return `${printExpr(bound.offset)} PRECEDING`;
    case 'following':
      return `${printExpr(bound.offset)} FOLLOWING`;
  }
}

function stepSql(step: IndirectionStep): string {
  switch (step.kind) {
    case 'index':
      return `[${printExpr(step.index)}]`;
    case 'slice':
      return `[${step.lower ? printExpr(step.lower) : ''}:${step.upper ? printExpr(step.upper) : ''}]`;
    case 'field':
      return `.${quoteIdent(step.name)}`;
    case 'star':
      return '.*';
  }
}

/** A string literal: quotes doubled (standard_conforming_strings: backslashes are plain characters). */
export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

const plainIdents = new Map<string, boolean>();

/** An identifier as PostgreSQL's quote_ident writes it: bare when lower case, plain and not a reserved-ish keyword. */
export function quoteIdent(name: string): string {
  let plain = plainIdents.get(name);
  if (plain === undefined) {
    plain = /^[a-z_][a-z0-9_$]*$/.test(name) && keywordKind(name) <= 1;
    if (plainIdents.size < 10_000) plainIdents.set(name, plain);
  }
  return plain ? name : `"${name.replaceAll('"', '""')}"`;
}

/** PostgreSQL's keyword category of a word: 0 none, 1 unreserved, 2 column name, 3 type/function name, 4 reserved. */
function keywordKind(word: string): number {
  const tokens = scanSync(word).tokens;
  return tokens.length === 1 ? tokens[0]!.keywordKind : 0;
}

/** Replaces identifier `from` by `to` in SQL text (stored CHECK definitions after RENAME COLUMN). */
export function renameIdentifier(text: string, from: string, to: string): string {
  const tokens = tokenize(text);
  let out = '';
  let pos = 0;
  for (const t of tokens) {
    if ((t.kind === 'ident' || t.kind === 'qident') && t.value === from) {
      out += text.slice(pos, t.start) + quoteIdent(to);
      pos = t.end;
    }
  }
  return out + text.slice(pos);
}
