import { isSvcError } from '../../core/errors.js';
import { STR_PREFIX } from './preprocess.js';
import type { Token } from './tokens.js';

/**
 * AST templates: statements that differ only in their literals (`... WHERE id = 17`, then
 * `... id = 42`) are parsed by node-sql-parser once. Parsing is the largest fixed cost of a small
 * query (~1 ms); instantiating a template is a structured clone plus one assignment per literal.
 *
 * How a template is made: every literal token of the statement is replaced by a sentinel of the
 * same lexical class, that text is parsed, and each sentinel must then be found exactly once as a
 * leaf of the AST (a number may appear negated: the parser folds `-5` into -5). When anything is
 * off (a sentinel missing, repeated, or embedded in a longer string, or literals the rewrite
 * consumed itself such as VECTOR(n) or LIMIT expressions) the shape is remembered as not
 * templatable and statements of that shape are parsed as they are.
 */

/** Lexical classes whose AST form differs (see preprocess.ts rewrite()). */
type LiteralClass = 'int' | 'num' | 'str' | 'strEscaped';

const SAFE_INTEGER = /^[0-9]{1,15}$/;
/** Large enough to collide with nothing a statement could hold beside the sentinels themselves. */
const INT_SENTINEL_BASE = 987_654_321_000;
const NUM_SENTINEL_BASE = '98765432100000000000';
const STR_SENTINEL = '\u0001svc_lit_';

function classOf(token: Token): LiteralClass | null {
  if (token.kind === 'number') return SAFE_INTEGER.test(token.text) ? 'int' : 'num';
  if (token.kind === 'string') return token.value.includes('\\') ? 'strEscaped' : 'str';
  return null;
}

/** The value a literal token becomes in the AST (number) or the raw string the AST holds. */
function astValueOf(cls: LiteralClass, token: Token): number | string {
  switch (cls) {
    case 'int':
      return Number(token.text);
    case 'num':
      return token.text;
    case 'str':
      return token.value.replaceAll("'", "''");
    case 'strEscaped':
      return STR_PREFIX + Buffer.from(token.value, 'utf8').toString('hex');
  }
}

function sentinelToken(cls: LiteralClass, i: number, like: Token): Token {
  switch (cls) {
    case 'int':
      return { ...like, text: String(INT_SENTINEL_BASE + i), value: String(INT_SENTINEL_BASE + i) };
    case 'num':
      return { ...like, text: NUM_SENTINEL_BASE + i, value: NUM_SENTINEL_BASE + i };
    case 'str':
    case 'strEscaped': {
      const value = `${STR_SENTINEL}${i}${cls === 'strEscaped' ? '\\' : ''}`;
      return { ...like, text: `'${value}'`, value };
    }
  }
}

/** Where literal `index` goes: the object holding it, by path from the root, and its sign. */
interface Slot {
  readonly path: readonly (string | number)[];
  readonly index: number;
  readonly negated: boolean;
}

interface Template<T> {
  readonly parsed: T;
  readonly ast: unknown;
  readonly slots: readonly Slot[];
}

export interface TemplateParse<T> {
  /** The parsed statement whose AST is at `astOf(parsed)`. */
  readonly parsed: T;
  readonly ast: unknown;
  /** True when the rewrite consumed literals itself (the template would not be faithful). */
  readonly literalsConsumed: boolean;
}

/** Deep-walks an AST and finds the leaves holding sentinels; null when any is not exactly once. */
function findSlots(ast: unknown, sentinels: readonly (number | string)[]): Slot[] | null {
  const at = new Map<number | string, number>(sentinels.map((s, i) => [s, i]));
  const slots: Slot[] = [];
  let faithful = true;
  const walk = (node: unknown, path: (string | number)[]): void => {
    if (!faithful) return;
    if (typeof node === 'number') {
      const index = at.get(node) ?? at.get(-node);
      if (index !== undefined) slots.push({ path: [...path], index, negated: at.get(node) === undefined });
      else if (Math.abs(node) >= INT_SENTINEL_BASE && Math.abs(node) < INT_SENTINEL_BASE + sentinels.length) faithful = false;
      return;
    }
    if (typeof node === 'string') {
      const index = at.get(node);
      if (index !== undefined) slots.push({ path: [...path], index, negated: false });
      else if (node.includes(STR_SENTINEL) || node.includes(NUM_SENTINEL_BASE) || node.includes(Buffer.from(STR_SENTINEL).toString('hex'))) faithful = false;
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, [...path, i]));
      return;
    }
    for (const [key, child] of Object.entries(node)) walk(child, [...path, key]);
  };
  walk(ast, []);
  if (!faithful || slots.length !== sentinels.length) return null;
  const seen = new Set(slots.map((s) => s.index));
  return seen.size === sentinels.length ? slots : null;
}

function setAt(root: unknown, path: readonly (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (let i = 0; i < path.length - 1; i++) node = node[path[i]!] as Record<string | number, unknown>;
  node[path[path.length - 1]!] = value;
}

/** LRU of templates by statement shape; `false` marks a shape that cannot be templated. */
export class AstTemplateCache<T> {
  private readonly entries = new Map<string, Template<T> | false>();
  /** Statements parsed from a template, and those of a shape that cannot be (tests read these). */
  readonly counts = { instantiated: 0, untemplated: 0 };

  constructor(
    private readonly entriesMax: number,
    private readonly tokensMax: number,
  ) {}

  /**
   * Parses `tokens` with `parse` (which returns the parsed statement and its AST), through the
   * cache. `withAst` rebuilds the parsed statement around an instantiated AST.
   */
  parse(tokens: readonly Token[], parse: (tokens: readonly Token[]) => TemplateParse<T>, withAst: (parsed: T, ast: unknown) => T): T {
    if (tokens.length > this.tokensMax) return parse(tokens).parsed;
    const classes = tokens.map(classOf);
    // Spacing is part of the shape: the parser reads `-7` as the number -7 but `- 7` as minus 7.
    const key = tokens
      .map((t, i) => `${i > 0 && tokens[i - 1]!.end === t.start ? '' : ' '}${classes[i] ?? `${t.kind}:${t.kind === 'ident' ? t.value : t.text}`}`)
      .join('\u0000');
    const cached = this.entries.get(key);
    if (cached === false) {
      this.counts.untemplated += 1;
      return parse(tokens).parsed;
    }
    if (cached) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      this.counts.instantiated += 1;
      return this.instantiate(cached, tokens, classes, withAst);
    }
    const template = this.make(tokens, classes, parse);
    this.remember(key, template ?? false);
    if (template) this.counts.instantiated += 1;
    else this.counts.untemplated += 1;
    return template ? this.instantiate(template, tokens, classes, withAst) : parse(tokens).parsed;
  }

  private make(tokens: readonly Token[], classes: readonly (LiteralClass | null)[], parse: (tokens: readonly Token[]) => TemplateParse<T>): Template<T> | null {
    let count = 0;
    const sentinels: (number | string)[] = [];
    const probe = tokens.map((t, i) => {
      const cls = classes[i];
      if (!cls) return t;
      const sentinel = sentinelToken(cls, count++, t);
      sentinels.push(astValueOf(cls, sentinel));
      return sentinel;
    });
    let result: TemplateParse<T>;
    try {
      result = parse(probe);
    } catch (error) {
      if (!isSvcError(error)) throw error;
      return null; // the statement's own parse reports the error, with its own text
    }
    if (result.literalsConsumed) return null;
    const slots = findSlots(result.ast, sentinels);
    return slots ? { parsed: result.parsed, ast: result.ast, slots } : null;
  }

  private instantiate(template: Template<T>, tokens: readonly Token[], classes: readonly (LiteralClass | null)[], withAst: (parsed: T, ast: unknown) => T): T {
    const literals: (number | string)[] = [];
    tokens.forEach((t, i) => {
      const cls = classes[i];
      if (cls) literals.push(astValueOf(cls, t));
    });
    const ast = structuredClone(template.ast);
    for (const slot of template.slots) {
      const value = literals[slot.index]!;
      setAt(ast, slot.path, slot.negated ? -(value as number) : value);
    }
    return withAst(template.parsed, ast);
  }

  private remember(key: string, entry: Template<T> | false): void {
    this.entries.set(key, entry);
    if (this.entries.size > this.entriesMax) this.entries.delete(this.entries.keys().next().value!);
  }
}
