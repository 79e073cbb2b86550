/**
 * Nunjucks behind one small interface (the one file that imports it): a webhook template compiled
 * once, rendered per event, kept away from Node.
 *
 * Nunjucks is not a sandbox by itself: `{{ range.constructor("return process")() }}` reaches the
 * Function constructor. So:
 * - At compile time the template's syntax tree is walked and refused (VALIDATION_ERROR) when it
 *   names `constructor`, `prototype`, `__proto__` or the `__define/lookup*__` accessors, uses
 *   include / import / extends (the environment has no loader either), or the `random` filter
 *   (a redelivery must send the same bytes).
 * - At run time nunjucks' member and name lookups are guarded (installed once on its runtime
 *   module, which only this file uses): those names, plus `caller`, `arguments`, `callee` and the
 *   string amplifiers `repeat`, `padStart`, `padEnd`, give only an object's own non-function data
 *   (a column may be called `repeat`), else undefined.
 * - Each render has a budget: loop items, calls (macros and methods: a recursive macro cannot run
 *   away), range() length, and the width arguments of indent / center / batch / slice.
 * Autoescape is off: the output is usually JSON, and HTML escaping would corrupt it; `{{ x | dump }}`
 * writes a value as JSON.
 */
import nunjucks from 'nunjucks';
import { SvcError } from '../../core/errors.js';
import { WEBHOOK_LIMITS } from './limits.js';

export interface CompiledTemplate {
  /** Renders with these variables; throws SvcError (VALIDATION_ERROR, or LIMIT_EXCEEDED for a budget). */
  render(variables: Record<string, unknown>): string;
}

/** Per render: loop items over all loops, and function or macro calls. */
export const TEMPLATE_LOOP_ITEMS_MAX = 10_000;
export const TEMPLATE_CALLS_MAX = 10_000;
/** Width or count arguments of indent, center, batch and slice. */
export const TEMPLATE_WIDTH_MAX = 1_000;

const ESCAPES = ['constructor', 'prototype', '__proto__', '__defineGetter__', '__defineSetter__', '__lookupGetter__', '__lookupSetter__'];
const REFUSED_NAMES = new Set(ESCAPES);
const GUARDED_NAMES = new Set([...ESCAPES, 'caller', 'arguments', 'callee', 'repeat', 'padStart', 'padEnd']);
const REFUSED_NODES = new Set(['Include', 'Import', 'FromImport', 'Extends']);
const REFUSED_FILTERS = new Set(['random']);

interface AstNode {
  readonly typename: string;
  readonly fields: readonly string[];
  readonly [field: string]: unknown;
}

type Fn = (...args: unknown[]) => unknown;
interface Runtime {
  memberLookup: (obj: unknown, name: unknown) => unknown;
  contextOrFrameLookup: (context: unknown, frame: unknown, name: string) => unknown;
  callWrap: (obj: unknown, name: string, context: unknown, args: unknown[]) => unknown;
  fromIterator: (value: unknown) => unknown;
  svcdbGuarded?: boolean;
}
const internals = nunjucks as unknown as { runtime: Runtime; parser: { parse(src: string): AstNode } };

/** The budget of the render in progress (renders are synchronous: one at a time). */
let budget: { items: number; calls: number; exceeded: string | null } | null = null;

function spend(kind: 'items' | 'calls', n: number): void {
  if (budget === null) return;
  budget[kind] -= n;
  if (budget[kind] < 0) {
    budget.exceeded = kind === 'items' ? `more than ${TEMPLATE_LOOP_ITEMS_MAX} loop items` : `more than ${TEMPLATE_CALLS_MAX} calls`;
    throw new Error(`template budget exceeded: ${budget.exceeded}`);
  }
}

function ownData(obj: unknown, name: string): unknown {
  if (obj === null || typeof obj !== 'object' || !Object.hasOwn(obj, name)) return undefined;
  const value = (obj as Record<string, unknown>)[name];
  return typeof value === 'function' ? undefined : value;
}

function installGuards(): void {
  const rt = internals.runtime;
  if (rt.svcdbGuarded) return;
  const { memberLookup, contextOrFrameLookup, callWrap, fromIterator } = rt;
  rt.memberLookup = (obj, name) => (GUARDED_NAMES.has(String(name)) ? ownData(obj, String(name)) : memberLookup(obj, name));
  rt.contextOrFrameLookup = (context, frame, name) => (GUARDED_NAMES.has(name) ? undefined : contextOrFrameLookup(context, frame, name));
  rt.callWrap = (obj, name, context, args) => {
    spend('calls', 1);
    return callWrap(obj, name, context, args);
  };
  rt.fromIterator = (value) => {
    const out = fromIterator(value);
    if (out !== null && (typeof out === 'object' || typeof out === 'string')) {
      spend('items', typeof out === 'string' || Array.isArray(out) ? out.length : Object.keys(out).length);
    }
    return out;
  };
  rt.svcdbGuarded = true;
}

function refuse(message: string, details: Record<string, unknown> = {}, cause?: unknown): never {
  throw new SvcError('VALIDATION_ERROR', `transform.template: ${message}`, { field: 'transform.template', ...details }, cause);
}

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && typeof (value as AstNode).typename === 'string' && Array.isArray((value as AstNode).fields);
}

function walk(node: AstNode, visit: (node: AstNode) => void): void {
  visit(node);
  for (const field of node.fields) {
    const value = node[field];
    if (isNode(value)) walk(value, visit);
    else if (Array.isArray(value)) for (const child of value) if (isNode(child)) walk(child, visit);
  }
}

function checkTree(root: AstNode, env: nunjucks.Environment): void {
  const knownFilter = (name: string) => Object.hasOwn((env as unknown as { filters: object }).filters, name);
  walk(root, (node) => {
    const nameOf = (n: unknown) => (isNode(n) && (n.typename === 'Symbol' || n.typename === 'Literal') ? String(n.value) : null);
    if (REFUSED_NODES.has(node.typename)) refuse(`${node.typename.toLowerCase()} is not available in webhook templates`, { line: Number(node.lineno) + 1 });
    const name = node.typename === 'Symbol' ? nameOf(node) : node.typename === 'LookupVal' ? nameOf(node.val) : null;
    if (name !== null && REFUSED_NAMES.has(name)) refuse(`the name ${name} is not allowed`, { line: Number(node.lineno) + 1 });
    if (node.typename === 'Filter' || node.typename === 'FilterAsync') {
      const filter = nameOf(node.name) ?? '';
      if (REFUSED_FILTERS.has(filter)) refuse(`the ${filter} filter is not available (a redelivery must send the same bytes)`);
      if (!knownFilter(filter)) refuse(`unknown filter ${filter}`, { line: Number(node.lineno) + 1 });
    }
  });
}

function bounded(what: string, n: unknown, max: number): void {
  if (typeof n === 'number' && Math.abs(n) > max) {
    if (budget) budget.exceeded = `${what} of ${n} (most ${max})`;
    throw new Error(`${what} of ${n} is above ${max}`);
  }
}

/** An environment with no loader, autoescape off, and bounded range() and width filters. */
function sandboxEnvironment(): nunjucks.Environment {
  const env = new nunjucks.Environment([], { autoescape: false, throwOnUndefined: false, trimBlocks: false, lstripBlocks: false });
  env.addGlobal('range', (start: number, stop?: number, step?: number) => {
    const [from, to, by] = stop === undefined ? [0, start, 1] : [start, stop, step || 1];
    const length = Math.max(0, Math.ceil((to - from) / by));
    bounded('range() length', length, WEBHOOK_LIMITS.templateRangeLengthMax);
    return Array.from({ length }, (_, i) => from + i * by);
  });
  for (const name of ['indent', 'center', 'batch', 'slice']) {
    const original = env.getFilter(name) as Fn;
    env.addFilter(name, function (this: unknown, ...args: unknown[]) {
      bounded(`${name} width`, args[1], TEMPLATE_WIDTH_MAX);
      return original.apply(this, args);
    });
  }
  return env;
}

/** Parses, checks and compiles a template (VALIDATION_ERROR when it does not parse or is refused). */
export function compileTemplate(text: string): CompiledTemplate {
  installGuards();
  if (typeof text !== 'string' || text.length > WEBHOOK_LIMITS.templateCharsMax) {
    refuse(`a template is text of at most ${WEBHOOK_LIMITS.templateCharsMax} characters`);
  }
  let template: nunjucks.Template;
  try {
    const env = sandboxEnvironment();
    checkTree(internals.parser.parse(text), env);
    template = new nunjucks.Template(text, env, 'webhook template', true);
  } catch (err) {
    if (err instanceof SvcError) throw err;
    refuse(`does not parse: ${(err as Error).message.replace(/\s+/g, ' ').trim()}`, {}, err);
  }
  return {
    render(variables) {
      const saved = budget;
      budget = { items: TEMPLATE_LOOP_ITEMS_MAX, calls: TEMPLATE_CALLS_MAX, exceeded: null };
      const mine = budget;
      try {
        return template.render(variables);
      } catch (err) {
        const message = (err as Error).message.replace(/\s+/g, ' ').trim();
        if (mine.exceeded !== null) throw new SvcError('LIMIT_EXCEEDED', `template: ${mine.exceeded}`, { field: 'transform.template' }, err);
        throw new SvcError('VALIDATION_ERROR', `template failed: ${message}`, { field: 'transform.template' }, err);
      } finally {
        budget = saved;
      }
    },
  };
}
