/**
 * A tiny SQL expression evaluator over the type system, for differential tests against PGlite:
 * literals, 'strings' (unknown), NULL, TRUE/FALSE, casts (:: and CAST), ARRAY[...], unary and
 * binary operators with PostgreSQL's precedence, [NOT] LIKE/ILIKE, IS [NOT] NULL, AND/OR/NOT,
 * function calls. It binds exactly as the engine must: resolveFunction, then implicit casts of each
 * argument to the resolved parameter type; strict functions return NULL on a NULL argument.
 */
import { SvcError } from '../../../core/errors.js';
import { arrayOf, baseType, pgTypeName, T, typeSystem, type QType, type QValue } from '../../../query/types/index.js';

type Node =
  | { k: 'lit'; type: QType; text: string | null }
  | { k: 'cast'; e: Node; to: string }
  | { k: 'call'; name: string; args: Node[] }
  | { k: 'array'; items: Node[] }
  | { k: 'and' | 'or'; a: Node; b: Node }
  | { k: 'not'; e: Node }
  | { k: 'isnull'; e: Node; neg: boolean };

const OPS = ['::', '->>', '->', '#>>', '#>', '#-', '@>', '<@', '?|', '?&', '<->', '<=>', '<#>', '||/', '|/', '||', '<<', '>>', '<=', '>=', '<>', '!=',
  '!~~*', '!~~', '~~*', '~~', '!~*', '!~', '~*', '&&', '@', '+', '-', '*', '/', '%', '^', '<', '>', '=', '~', '&', '|', '#', '?', '(', ')', '[', ']', ','];

function tokenize(src: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === "'" || (/[eE]/.test(c) && src[i + 1] === "'")) {
      let j = c === "'" ? i + 1 : i + 2;
      let s = "'";
      for (;;) {
        if (j >= src.length) throw new Error('unterminated string');
        if (src[j] === "'" && src[j + 1] === "'") { s += "'"; j += 2; continue; }
        if (src[j] === "'") { j++; break; }
        s += src[j++];
      }
      out.push(s);
      i = j;
      continue;
    }
    const num = /^(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(src.slice(i));
    if (num) { out.push(num[1]!); i += num[1]!.length; continue; }
    const id = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
    if (id) { out.push(id[0]); i += id[0].length; continue; }
    if (c === '"') { const j = src.indexOf('"', i + 1); out.push(src.slice(i, j + 1)); i = j + 1; continue; }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw new Error(`bad char ${c} in ${src}`);
    out.push(op);
    i += op.length;
  }
  return out;
}

const BIN_PREC: Record<string, number> = {
  or: 1, and: 2, '=': 5, '<': 5, '>': 5, '<=': 5, '>=': 5, '<>': 5, '!=': 5, like: 6, ilike: 6, '~~': 7,
  '+': 9, '-': 9, '*': 10, '/': 10, '%': 10, '^': 11,
};
const OTHER_PREC = 8;

class Parser {
  private pos = 0;
  constructor(private readonly toks: string[]) {}
  private peek(): string | undefined { return this.toks[this.pos]; }
  private next(): string { return this.toks[this.pos++]!; }
  private expect(t: string): void { const n = this.next(); if (n?.toLowerCase() !== t) throw new Error(`expected ${t}, got ${n}`); }

  parse(): Node {
    const e = this.expr(0);
    if (this.pos !== this.toks.length) throw new Error(`junk at ${this.peek()}`);
    return e;
  }

  private binPrec(t: string | undefined): number {
    if (t === undefined || t === ')' || t === ',' || t === ']') return -1;
    const l = t.toLowerCase();
    if (l === 'in' || l === 'from' || l === 'for' || l === 'as') return -1;
    if (l === 'not' || l === 'is') return l === 'is' ? 4 : 6;
    if (BIN_PREC[l] !== undefined) return BIN_PREC[l]!;
    if (/^[A-Za-z]/.test(t) || t === '::' || t === '(' || t === '[') return -1;
    return OTHER_PREC;
  }

  /** POSITION(a IN b) / SUBSTRING(a FROM b [FOR c]) spellings. */
  private hasKeywordArgs(): boolean {
    let depth = 0;
    for (let i = this.pos; i < this.toks.length; i++) {
      const t = this.toks[i]!.toLowerCase();
      if (t === '(') depth++;
      else if (t === ')') { depth--; if (depth === 0) return false; }
      else if (depth === 1 && (t === 'in' || t === 'from')) return true;
    }
    return false;
  }

  private expr(minPrec: number): Node {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      const p = this.binPrec(t);
      if (p < 0 || p < minPrec) return left;
      const l = t!.toLowerCase();
      this.next();
      if (l === 'is') {
        let neg = false;
        if (this.peek()?.toLowerCase() === 'not') { this.next(); neg = true; }
        this.expect('null');
        left = { k: 'isnull', e: left, neg };
        continue;
      }
      if (l === 'not') {
        const w = this.next().toLowerCase();
        const right = this.expr(p + 1);
        left = { k: 'call', name: w === 'like' ? '!~~' : '!~~*', args: [left, right] };
        continue;
      }
      const right = this.expr(l === '^' ? p + 1 : p + 1);
      if (l === 'and' || l === 'or') left = { k: l, a: left, b: right };
      else if (l === 'like') left = { k: 'call', name: '~~', args: [left, right] };
      else if (l === 'ilike') left = { k: 'call', name: '~~*', args: [left, right] };
      else left = { k: 'call', name: t!, args: [left, right] };
    }
  }

  private unary(): Node {
    const t = this.peek();
    if (t === '-' || t === '+' || t === '~' || t === '|/' || t === '||/' || t === '@') {
      this.next();
      const e = this.unary();
      if (t === '-' && e.k === 'lit' && e.text !== null && /^-?\d/.test(e.text) && e.type.name !== 'unknown') {
        // PostgreSQL folds a minus into a numeric constant (even through parentheses), then types it.
        return literalNumber(e.text.startsWith('-') ? e.text.slice(1) : '-' + e.text);
      }
      return { k: 'call', name: t, args: [e] };
    }
    if (t?.toLowerCase() === 'not') { this.next(); return { k: 'not', e: this.expr(3) }; }
    return this.postfix(this.primary());
  }

  private postfix(e: Node): Node {
    while (this.peek() === '::') {
      this.next();
      e = { k: 'cast', e, to: this.typeName() };
    }
    return e;
  }

  private typeName(): string {
    let name = this.next();
    const multi = ['precision', 'varying', 'with', 'without', 'time', 'zone'];
    while (this.peek() !== undefined && multi.includes(this.peek()!.toLowerCase())) name += ' ' + this.next();
    if (this.peek() === '(') {
      name += this.next();
      while (this.peek() !== ')') name += this.next();
      name += this.next();
      while (this.peek() !== undefined && multi.includes(this.peek()!.toLowerCase())) name += ' ' + this.next();
    }
    while (this.peek() === '[') { this.next(); this.expect(']'); name += '[]'; }
    return name;
  }

  private primary(): Node {
    const t = this.next();
    if (t === '(') { const e = this.expr(0); this.expect(')'); return e; }
    if (t.startsWith("'")) return { k: 'lit', type: T.unknown, text: t.slice(1) };
    if (/^[\d.]/.test(t)) return literalNumber(t);
    const l = t.toLowerCase();
    if (l === 'null') return { k: 'lit', type: T.unknown, text: null };
    if (l === 'true' || l === 'false') return { k: 'lit', type: T.bool, text: l };
    const typed = ['interval', 'timestamp', 'timestamptz', 'date', 'jsonb', 'numeric', 'uuid', 'text', 'int4', 'int8', 'float8', 'bool', 'boolean'];
    if (typed.includes(l) && this.peek()?.startsWith("'")) {
      return { k: 'cast', e: { k: 'lit', type: T.unknown, text: this.next().slice(1) }, to: l };
    }
    if (l === 'extract' && this.peek() === '(') {
      this.next();
      const field = this.next();
      this.expect('from');
      const e = this.expr(0);
      this.expect(')');
      return { k: 'call', name: 'extract', args: [{ k: 'lit', type: T.unknown, text: field.replace(/^'/, '') }, e] };
    }
    if (l === 'cast') {
      this.expect('(');
      const e = this.expr(0);
      this.expect('as');
      const to = this.typeName();
      this.expect(')');
      return { k: 'cast', e, to };
    }
    if (l === 'array') {
      this.expect('[');
      const items: Node[] = [];
      if (this.peek() !== ']') for (;;) { items.push(this.expr(0)); if (this.peek() === ',') { this.next(); continue; } break; }
      this.expect(']');
      return { k: 'array', items };
    }
    if ((l === 'position' || l === 'substring') && this.peek() === '(' && this.hasKeywordArgs()) {
      this.next();
      const a = this.expr(BIN_PREC.like! + 1);
      if (l === 'position') { this.expect('in'); const b = this.expr(0); this.expect(')'); return { k: 'call', name: 'position', args: [b, a] }; }
      this.expect('from');
      const b = this.expr(0);
      const args = [a, b];
      if (this.peek()?.toLowerCase() === 'for') { this.next(); args.push(this.expr(0)); }
      this.expect(')');
      return { k: 'call', name: 'substring', args };
    }
    if (/^[a-z_]/.test(l) && this.peek() === '(') {
      this.next();
      const args: Node[] = [];
      if (this.peek() !== ')') for (;;) { args.push(this.expr(0)); if (this.peek() === ',') { this.next(); continue; } break; }
      this.expect(')');
      return { k: 'call', name: l, args };
    }
    if (['current_date', 'current_timestamp', 'localtimestamp'].includes(l)) return { k: 'call', name: l, args: [] };
    throw new Error(`unexpected ${t}`);
  }
}

/** PostgreSQL's typing of numeric constants: int4, else int8, else numeric. */
function literalNumber(text: string): Node {
  if (/^-?\d+$/.test(text)) {
    const v = BigInt(text);
    if (v >= -2147483648n && v <= 2147483647n) return { k: 'lit', type: T.int4, text };
    if (v >= -9223372036854775808n && v <= 9223372036854775807n) return { k: 'lit', type: T.int8, text };
  }
  return { k: 'lit', type: T.numeric, text };
}

interface Bound { type: QType; eval: () => QValue }

function coerce(b: Bound, to: QType): Bound {
  if (b.type.name === to.name && b.type.name !== 'array' && b.type.length === to.length && b.type.precision === to.precision) return { type: to, eval: b.eval };
  const cast = typeSystem.resolveCast(b.type, to, 'implicit');
  if (cast === null) throw new SvcError('TYPE_MISMATCH', `cannot coerce ${b.type.name} to ${to.name}`);
  return { type: to, eval: () => { const v = b.eval(); return v === null ? null : cast(v); } };
}

function bind(n: Node): Bound {
  switch (n.k) {
    case 'lit': {
      if (n.text === null) return { type: T.unknown, eval: () => null };
      const text = n.text;
      if (n.type.name === 'unknown') return { type: T.unknown, eval: () => text };
      return { type: n.type, eval: () => typeSystem.parseText(n.type, text) };
    }
    case 'cast': {
      const to = typeSystem.parseTypeName(n.to);
      const inner = bind(n.e);
      const cast = typeSystem.resolveCast(inner.type, to, 'explicit');
      if (cast === null) throw new SvcError('TYPE_MISMATCH', `cannot cast type ${pgTypeName(inner.type)} to ${pgTypeName(to)}`);
      return { type: to, eval: () => { const v = inner.eval(); return v === null ? null : cast(v); } };
    }
    case 'array': {
      const items = n.items.map(bind);
      const el = items.length === 0 ? T.text : typeSystem.commonType(items.map((i) => i.type));
      if (el === null) throw new SvcError('TYPE_MISMATCH', 'ARRAY types cannot be matched');
      const cs = items.map((i) => coerce(i, el.name === 'unknown' ? T.text : el));
      return { type: arrayOf(el.name === 'unknown' ? T.text : el), eval: () => cs.map((c) => c.eval()) };
    }
    case 'and': case 'or': {
      const a = coerce(bind(n.a), T.bool), b = coerce(bind(n.b), T.bool);
      const isAnd = n.k === 'and';
      return {
        type: T.bool, eval: () => {
          const x = a.eval(), y = b.eval();
          if (isAnd) return x === false || y === false ? false : x === null || y === null ? null : true;
          return x === true || y === true ? true : x === null || y === null ? null : false;
        },
      };
    }
    case 'not': { const a = coerce(bind(n.e), T.bool); return { type: T.bool, eval: () => { const v = a.eval(); return v === null ? null : !v; } }; }
    case 'isnull': { const a = bind(n.e); return { type: T.bool, eval: () => (a.eval() === null) !== n.neg }; }
    case 'call': {
      const args = n.args.map(bind);
      const f = typeSystem.resolveFunction(n.name === '!=' ? '<>' : n.name, args.map((a) => a.type));
      if (f === null) {
        const names = args.map((a) => pgTypeName(a.type));
        const message = /^[a-z_]/.test(n.name)
          ? `function ${n.name}(${names.join(', ')}) does not exist`
          : `operator does not exist: ${names.length === 1 ? `${n.name} ${names[0]}` : `${names[0]} ${n.name} ${names[1]}`}`;
        throw new SvcError('TYPE_MISMATCH', message);
      }
      const cs = args.map((a, i) => coerce(a, f.argTypes[i]!));
      return {
        type: f.returnType,
        eval: () => {
          const vals = cs.map((c) => c.eval());
          if (f.strict && vals.some((v) => v === null)) return null;
          return f.impl(vals);
        },
      };
    }
  }
}

/** Evaluates `expr` and returns its text (::text) or null; throws the SvcError PostgreSQL would give an error for. */
export function evalToText(expr: string): string | null {
  const b = bind(new Parser(tokenize(expr)).parse());
  const v = b.eval();
  if (v === null) return null;
  return typeSystem.formatText(b.type.name === 'unknown' ? T.text : b.type, v);
}

/** The expression's result type text. */
export function typeOf(expr: string): string {
  return typeSystem.typeText(bind(new Parser(tokenize(expr)).parse()).type);
}

/** PostgreSQL's pg_typeof text of the expression's type (modifiers dropped, as pg_typeof does). */
export function pgTypeOf(expr: string): string {
  const t = bind(new Parser(tokenize(expr)).parse()).type;
  return pgTypeName(baseType(t.name === 'unknown' ? T.text : t));
}

/** Evaluates a constant expression to its type and value (for aggregate inputs). */
export function evalValue(expr: string): { type: QType; value: QValue } {
  const b = bind(new Parser(tokenize(expr)).parse());
  return { type: b.type, value: b.eval() };
}
