/**
 * The function/operator catalog and PostgreSQL's overload resolution (func_select_candidate /
 * oper_select_candidate, "Type Conversion" chapter of the manual): exact match (a binary operator
 * with one unknown side takes the other side's type), then candidates reachable by implicit casts,
 * most exact matches, most preferred types where a conversion is needed, unknown literals by
 * category (string wins), and finally unknowns assumed to be the known arguments' common type.
 * Polymorphic parameters (anyelement, anyarray, anycompatible...) are bound to concrete types first.
 */
import type { QType, QValue, ResolvedFunction } from '../types/contract.js';
import { canCoerceImplicitly } from '../types/casts.js';
import { commonType } from '../types/common-type.js';
import { arrayOf, elementType, isPreferredType, sameBaseType, T, typeCategory } from '../types/qtype.js';

export type Poly = 'any' | 'anyelement' | 'anyarray' | 'anynonarray' | 'anycompatible' | 'anycompatiblearray';
export type ParamSpec = QType | Poly;
/**
 * Arguments as a tuple type so that implementations can destructure `[a, b]` without `!`:
 * the binder always passes exactly the resolved parameter count (checked by resolution).
 */
export type Args = readonly [QValue, QValue, QValue, QValue, QValue, QValue, QValue, QValue, ...QValue[]];
export type Impl = (args: Args) => QValue;

export interface FnDef {
  readonly name: string;
  readonly params: readonly ParamSpec[];
  /** Extra arguments repeat this parameter (concat, format, jsonb_build_object...). */
  readonly variadic?: ParamSpec;
  /** The return type, given the call's concrete parameter types. */
  readonly ret: QType | ((params: readonly QType[]) => QType);
  /** Builds the implementation for the concrete parameter types. */
  readonly make: (params: readonly QType[]) => Impl;
  /** Default true: NULL in, NULL out, impl not called. */
  readonly strict?: boolean;
  /** now(), random(): never folded. */
  readonly volatile?: boolean;
}

const CATALOG = new Map<string, FnDef[]>();

/** Adds definitions to the catalog (each module of the library registers its own). */
export function register(defs: readonly FnDef[]): void {
  for (const d of defs) {
    const list = CATALOG.get(d.name);
    if (list === undefined) CATALOG.set(d.name, [d]);
    else list.push(d);
  }
}

export function hasFunction(name: string): boolean {
  return CATALOG.has(name);
}

/** `declared` keeps the pseudo-types: PostgreSQL never counts a polymorphic position as exact or preferred. */
interface Candidate {
  def: FnDef;
  params: QType[];
  declared: ParamSpec[];
}

function isPoly(p: ParamSpec): p is Poly {
  return typeof p === 'string';
}

/** The declared parameter list stretched to `n` arguments (variadic), or null when arity differs. */
function stretch(def: FnDef, n: number): ParamSpec[] | null {
  if (def.variadic === undefined) return def.params.length === n ? [...def.params] : null;
  if (n < def.params.length) return null;
  return [...def.params, ...Array<ParamSpec>(n - def.params.length).fill(def.variadic)];
}

/** Binds polymorphic parameters to the call's types (PostgreSQL's enforce_generic_type_consistency). */
function bindPolymorphic(specs: readonly ParamSpec[], args: readonly QType[]): QType[] | null {
  let elem: QType | null = null;
  const compat: QType[] = [];
  for (let i = 0; i < specs.length; i++) {
    const s = specs[i]!,
      a = args[i]!;
    if (!isPoly(s) || a.name === 'unknown') continue;
    if (s === 'anyelement' || s === 'anynonarray') {
      if (s === 'anynonarray' && a.name === 'array') return null;
      if (elem !== null && !sameBaseType(elem, a)) return null;
      elem = a;
    } else if (s === 'anyarray') {
      if (a.name !== 'array') return null;
      if (elem !== null && !sameBaseType(elem, elementType(a))) return null;
      elem = elementType(a);
    } else if (s === 'anycompatible') {
      compat.push(a);
    } else if (s === 'anycompatiblearray') {
      if (a.name !== 'array') return null;
      compat.push(elementType(a));
    }
  }
  const needsElem = specs.some((s) => s === 'anyelement' || s === 'anyarray' || s === 'anynonarray');
  if (needsElem && elem === null) return null; // only unknowns: PostgreSQL cannot determine the type either
  const needsCompat = specs.some((s) => s === 'anycompatible' || s === 'anycompatiblearray');
  let compatType: QType | null = null;
  if (needsCompat) {
    compatType = compat.length === 0 ? null : commonType(compat);
    if (compatType === null) return null;
  }
  return specs.map((s, i) => {
    if (!isPoly(s)) return s;
    switch (s) {
      case 'any':
        return args[i]!.name === 'unknown' ? T.text : args[i]!;
      case 'anyelement':
      case 'anynonarray':
        return elem!;
      case 'anyarray':
        return arrayOf(elem!);
      case 'anycompatible':
        return compatType!;
      case 'anycompatiblearray':
        return arrayOf(compatType!);
    }
  });
}

function isExact(arg: QType, c: Candidate, i: number): boolean {
  const d = c.declared[i]!;
  return arg.name !== 'unknown' && !isPoly(d) && sameBaseType(arg, d);
}

function isPreferredAt(c: Candidate, i: number): boolean {
  const d = c.declared[i]!;
  return !isPoly(d) && isPreferredType(d);
}

function categoryAt(c: Candidate, i: number): string {
  const d = c.declared[i]!;
  return isPoly(d) ? 'P' : typeCategory(d);
}

function countExact(c: Candidate, args: readonly QType[]): number {
  let n = 0;
  for (let i = 0; i < args.length; i++) if (isExact(args[i]!, c, i)) n++;
  return n;
}

function keepMax(cands: Candidate[], score: (c: Candidate) => number): Candidate[] {
  let best = -1;
  let out: Candidate[] = [];
  for (const c of cands) {
    const s = score(c);
    if (s > best) {
      best = s;
      out = [c];
    } else if (s === best) out.push(c);
  }
  return out;
}

/** Definitions whose parameters can take `args` (polymorphics bound). */
function candidates(defs: readonly FnDef[], args: readonly QType[]): Candidate[] {
  const out: Candidate[] = [];
  for (const def of defs) {
    const specs = stretch(def, args.length);
    if (specs === null) continue;
    const params = bindPolymorphic(specs, args);
    if (params === null) continue;
    out.push({ def, params, declared: specs });
  }
  return out;
}

function selectCandidate(cands: Candidate[], args: readonly QType[]): Candidate | null {
  // Exact match; a binary operator's unknown side is assumed to be the other side's type.
  const probe =
    args.length === 2 && (args[0]!.name === 'unknown') !== (args[1]!.name === 'unknown')
      ? args.map((a) => (a.name === 'unknown' ? args.find((b) => b.name !== 'unknown')! : a))
      : args;
  const exact = cands.filter((c) => probe.every((a, i) => isExact(a, c, i)));
  if (exact.length === 1) return exact[0]!;
  let viable = cands.filter((c) => args.every((a, i) => sameBaseType(a, c.params[i]!) || canCoerceImplicitly(a, c.params[i]!)));
  if (viable.length <= 1) return viable[0] ?? null;
  viable = keepMax(viable, (c) => countExact(c, args));
  if (viable.length === 1) return viable[0]!;
  // Known arguments only: an exact match or the preferred type of the argument's own category.
  viable = keepMax(
    viable,
    (c) => args.filter((a, i) => isExact(a, c, i) || (a.name !== 'unknown' && isPreferredAt(c, i) && categoryAt(c, i) === typeCategory(a))).length,
  );
  if (viable.length === 1) return viable[0]!;
  viable = resolveUnknownsByCategory(viable, args);
  if (viable.length === 1) return viable[0]!;
  return assumeKnownType(viable, args);
}

/**
 * Unknown arguments: at each unknown position choose the string category if any candidate takes
 * it there, else the one category all take (a conflict abandons this step), then keep candidates
 * of that category, preferring preferred types. If that rejects everything, keep everything.
 */
function resolveUnknownsByCategory(cands: Candidate[], args: readonly QType[]): Candidate[] {
  const slots = new Map<number, { cat: string; preferred: boolean }>();
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.name !== 'unknown') continue;
    let cat = '';
    let preferred = false;
    let conflict = false;
    for (const c of cands) {
      const cc = categoryAt(c, i),
        cp = isPreferredAt(c, i);
      if (cat === '') {
        cat = cc;
        preferred = cp;
      } else if (cc === cat) preferred ||= cp;
      else if (cc === 'S') {
        cat = cc;
        preferred = cp;
      } else conflict = true;
    }
    if (conflict && cat !== 'S') return cands;
    slots.set(i, { cat, preferred });
  }
  const kept = cands.filter((c) => [...slots].every(([i, s]) => categoryAt(c, i) === s.cat && (!s.preferred || isPreferredAt(c, i))));
  return kept.length === 0 ? cands : kept;
}

/** All known arguments of one type: assume the unknowns are that type too. */
function assumeKnownType(cands: Candidate[], args: readonly QType[]): Candidate | null {
  const known = args.filter((a) => a.name !== 'unknown');
  if (known.length === 0 || known.length === args.length) return null;
  if (!known.every((a) => sameBaseType(a, known[0]!))) return null;
  const assumed = args.map((a) => (a.name === 'unknown' ? known[0]! : a));
  const fit = cands.filter((c) => assumed.every((a, i) => sameBaseType(a, c.params[i]!) || canCoerceImplicitly(a, c.params[i]!)));
  return fit.length === 1 ? fit[0]! : null;
}

/** PostgreSQL's overload resolution over `defs`: the chosen definition and its concrete parameter types. */
export function chooseCandidate(defs: readonly FnDef[], args: readonly QType[]): { def: FnDef; params: QType[] } | null {
  const c = selectCandidate(candidates(defs, args), args);
  return c === null ? null : { def: c.def, params: c.params };
}

/** Several definitions accept the arguments and none is the best: PostgreSQL's "is not unique". */
export function isAmbiguous(name: string, args: readonly QType[]): boolean {
  const cands = candidates(CATALOG.get(name) ?? [], args);
  if (selectCandidate(cands, args) !== null) return false;
  return cands.filter((c) => args.every((a, i) => sameBaseType(a, c.params[i]!) || canCoerceImplicitly(a, c.params[i]!))).length > 1;
}

/** Resolves a call; null when no candidate fits (or several fit equally: see isAmbiguous). */
export function resolveFunction(name: string, args: readonly QType[]): ResolvedFunction | null {
  const chosen = chooseCandidate(CATALOG.get(name) ?? [], args);
  if (chosen === null) return null;
  const { def, params } = chosen;
  const returnType = typeof def.ret === 'function' ? def.ret(params) : def.ret;
  return {
    name: def.name,
    argTypes: params,
    returnType,
    strict: def.strict ?? true,
    immutable: !(def.volatile ?? false),
    impl: def.make(params) as unknown as ResolvedFunction['impl'],
  };
}
