/**
 * GROUP BY ROLLUP / CUBE / GROUPING SETS and GROUPING(…), as PostgreSQL reads them
 * (parse_agg.c expand_grouping_sets): every GROUP BY item is a list of grouping sets (a plain
 * expression one set of itself, `()` the empty set, ROLLUP (a, b) the sets (a, b), (a), (),
 * CUBE (a, b) every subset, GROUPING SETS (…) its members' sets one after another, an
 * unparenthesized `(a, b)` inside them one element of two keys) and the query's sets are the
 * cross product of its items' lists. GROUP BY DISTINCT drops sets that repeat one before them.
 *
 * The Aggregate node takes the distinct key expressions and each set as the indexes of its keys
 * (exec/ops/grouping-sets.ts groups by every set in one pass); a key outside a set is NULL in
 * that set's rows. GROUPING(a, b) is a bit per argument, most significant first, set when the
 * argument is not in the row's set: the node computes each call's value per set, as an extra
 * output column after the aggregates.
 */
import type { GroupingItem, SqlExpr } from '../parse/index.js';
import { INT4, type Expr } from '../plan/expr.js';
import { exprKey, walkExpr } from '../plan/expr-util.js';
import type { ResolvedFunction } from '../types/contract.js';
import { invalid } from './context.js';

/** PostgreSQL's limits: "CUBE is limited to 12 elements" and 4096 sets. */
const CUBE_ELEMENTS_MAX = 12;
const GROUPING_SETS_MAX = 4096;

export interface GroupingSets {
  /** The distinct grouping expressions, in order of first appearance. */
  readonly keys: Expr[];
  /** Each set as indexes into keys; null for a plain GROUP BY (one set of every key). */
  readonly sets: number[][] | null;
}

/** Whether GROUP BY uses ROLLUP, CUBE or GROUPING SETS (else it is plain: binding as before). */
export function hasGroupingSets(items: readonly GroupingItem[]): boolean {
  return items.some((i) => i.kind === 'rollup' || i.kind === 'cube' || i.kind === 'sets');
}

/** Expands GROUP BY items with ROLLUP/CUBE/GROUPING SETS; `bindKey` binds one grouping expression. */
export function expandGroupingSets(items: readonly GroupingItem[], distinct: boolean, bindKey: (node: SqlExpr) => Expr): GroupingSets {
  const keys: Expr[] = [];
  const indexOf = new Map<string, number>();
  const keyOf = (node: SqlExpr): number => {
    const e = bindKey(node);
    const k = exprKey(e);
    let i = indexOf.get(k);
    if (i === undefined) {
      i = keys.length;
      keys.push(e);
      indexOf.set(k, i);
    }
    return i;
  };
  // Inside ROLLUP, CUBE and GROUPING SETS, `(a, b)` (a row without ROW) is one element of two keys.
  const element = (node: SqlExpr): number[] => (node.kind === 'row' && !node.explicit ? node.items.map(keyOf) : [keyOf(node)]);
  const setsOf = (item: GroupingItem): number[][] => {
    switch (item.kind) {
      case 'expr':
        return [element(item.expr)];
      case 'empty':
        return [[]];
      case 'rollup': {
        const elements = item.items.map(element);
        const out: number[][] = [];
        for (let n = elements.length; n >= 0; n--) out.push(elements.slice(0, n).flat());
        return out;
      }
      case 'cube': {
        if (item.items.length > CUBE_ELEMENTS_MAX) throw invalid(`CUBE is limited to ${CUBE_ELEMENTS_MAX} elements`, { sqlstate: '54011' });
        const elements = item.items.map(element);
        const out: number[][] = [];
        for (let mask = 0; mask < 1 << elements.length; mask++) out.push(elements.filter((_e, j) => mask & (1 << j)).flat());
        return out;
      }
      case 'sets':
        return item.sets.flatMap(setsOf);
    }
  };
  let sets: number[][] = [[]];
  for (const item of items) {
    const own = item.kind === 'expr' ? [[keyOf(item.expr)]] : setsOf(item);
    sets = sets.flatMap((left) => own.map((right) => [...left, ...right]));
    if (sets.length > GROUPING_SETS_MAX) throw invalid(`too many grouping sets present (maximum ${GROUPING_SETS_MAX})`, { sqlstate: '54001' });
  }
  // A key given twice in one set is one key; GROUP BY DISTINCT keeps the first of equal sets.
  sets = sets.map((s) => [...new Set(s)].sort((a, b) => a - b));
  if (distinct) {
    const seen = new Set<string>();
    sets = sets.filter((s) => !seen.has(s.join(',')) && seen.add(s.join(',')) !== undefined);
  }
  return { keys, sets };
}

/** The bound GROUPING(…) before aggregation: replaced by a column of the Aggregate node, never evaluated. */
const GROUPING_FN: ResolvedFunction = {
  name: 'grouping',
  argTypes: [],
  returnType: INT4,
  strict: false,
  immutable: false,
  impl: () => {
    throw invalid('GROUPING outside a grouped query'); // the binder rewrites or refuses every call first
  },
};

/** GROUPING(args) as bound in a clause that allows aggregates (PostgreSQL's error elsewhere). */
export function groupingCall(args: Expr[], clause: string, allowed: boolean): Expr {
  // Its value is a 32-bit integer of one bit per argument (parse_agg.c transformGroupingFunc).
  if (args.length > 31) throw invalid('GROUPING must have fewer than 32 arguments', { sqlstate: '54023' });
  if (!allowed) throw invalid(`grouping operations are not allowed in ${clause}`);
  return { kind: 'call', type: INT4, fn: GROUPING_FN, args, label: 'grouping' };
}

export function isGroupingCall(e: Expr): e is Extract<Expr, { kind: 'call' }> {
  return e.kind === 'call' && e.fn === GROUPING_FN;
}

/** The GROUPING calls in expressions, de-duplicated: their keys and, per call, its arguments' key indexes. */
export function collectGroupingCalls(exprs: readonly Expr[], groupKeys: readonly string[]): { keys: string[]; args: number[][] } {
  const keys: string[] = [];
  const args: number[][] = [];
  for (const e of exprs) {
    walkExpr(e, (n) => {
      if (!isGroupingCall(n) || keys.includes(exprKey(n))) return;
      keys.push(exprKey(n));
      args.push(
        n.args.map((a) => {
          const i = groupKeys.indexOf(exprKey(a));
          if (i < 0) throw invalid('arguments to GROUPING must be grouping expressions of the associated query level');
          return i;
        }),
      );
    });
  }
  return { keys, args };
}

/** Whether any expression holds a GROUPING call. */
export function hasGroupingCall(exprs: readonly Expr[]): boolean {
  let found = false;
  for (const e of exprs) {
    walkExpr(e, (n) => {
      if (isGroupingCall(n)) found = true;
    });
  }
  return found;
}

/**
 * The select items that are constant grouping keys, as select index → key index. Under grouping
 * sets such an item is the key's column, NULL in the sets that leave the key out:
 * `SELECT 1 AS one, count(*) … GROUP BY ROLLUP (one)` is (1, n), (NULL, n). Every other constant
 * stays a constant, as PostgreSQL matches the key to one target entry (its sortgroupref), not
 * by value: in `SELECT 1 AS one, 1 AS uno, a + 1 … ROLLUP (one, a)` uno is always 1 and a + 1 is
 * NULL only where a is. The item is the one the key names by position or output name
 * (`itemOfKey`, by the key's structure), else the first item equal to it (findTargetlistEntrySQL99).
 * Non-constant keys need none of this: rewriteOverAggregate replaces them wherever they appear.
 */
export function constantKeyItems(keys: readonly Expr[], selectExprs: readonly Expr[], itemOfKey: ReadonlyMap<string, number>): Map<number, number> {
  const items = new Map<number, number>();
  keys.forEach((k, g) => {
    if (k.kind !== 'const') return;
    const key = exprKey(k);
    const at = itemOfKey.get(key) ?? selectExprs.findIndex((e) => exprKey(e) === key);
    if (at >= 0 && !items.has(at)) items.set(at, g);
  });
  return items;
}
