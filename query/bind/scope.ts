import { assert, columnNotFound, SvcError } from '../../core/errors.js';
import type { QType } from '../types/contract.js';
import type { Plan } from '../plan/nodes.js';
import { invalid } from './context.js';
import type { Expr } from '../plan/expr.js';
import type { WindowSpec } from '../parse/index.js';

/** One column visible in a FROM item. */
export interface ScopeColumn {
  readonly name: string;
  readonly type: QType;
  readonly nullable: boolean;
  /** Excluded from `*` and from unqualified lookup (the right side of JOIN USING). */
  readonly hidden?: boolean;
}

/** A FROM item (table, subquery, CTE reference, VALUES) and where its columns sit in the row. */
export interface RangeEntry {
  readonly alias: string;
  readonly columns: readonly ScopeColumn[];
  /** Index of its first column in the combined row of the FROM clause. */
  readonly offset: number;
  /** The table name for table entries (`schema.t` qualification). */
  readonly tableName?: string;
}

/** A CTE visible by name: the bound plan of its query. */
export interface CteDef {
  readonly name: string;
  readonly plan: Plan;
  readonly columnNames: readonly string[];
  /** Set while a WITH RECURSIVE member is bound: a reference reads its working table. */
  readonly recursive?: RecursiveCte;
}

/** The state of a recursive CTE while its terms are bound (see recursive-cte.ts). */
export interface RecursiveCte {
  readonly id: number;
  readonly name: string;
  phase: 'non_recursive' | 'recursive';
  /** The non-recursive term's columns (known once it is bound). */
  columns: readonly ScopeColumn[];
  refs: number;
  /** BindContext.sublinkDepth of the recursive term itself. */
  sublinkDepth: number;
}

/** Names visible to an expression: this query's FROM items, then enclosing queries (correlation). */
export class Scope {
  entries: RangeEntry[] = [];
  /** Set when an expression of this scope referenced an enclosing scope. */
  usedOuter = false;
  /** Set when an expression of a scope nested in this one referenced this scope's columns. */
  referencedFromInner = false;
  readonly ctes = new Map<string, CteDef>();
  /**
   * Row slots of JOIN ... USING columns whose unqualified name means an expression (FULL:
   * COALESCE, RIGHT: the right side's). Keyed by slot, not name, so another item's column of
   * the same name is still itself (and an unqualified reference still ambiguous).
   */
  readonly usingOverrides = new Map<number, Expr>();
  /** FROM items on the nullable side of an outer join (FOR UPDATE may not lock them). */
  readonly nullableAliases = new Set<string>();
  /** Row slots in the order `*` lists them (JOIN USING puts the merged columns first). */
  starOrder: number[] = [];
  /** WINDOW w AS (...) definitions of this query, their own `ref`s already resolved (window-frame.ts resolveWindow). */
  namedWindows = new Map<string, WindowSpec>();

  constructor(readonly parent: Scope | null) {}

  get width(): number {
    const last = this.entries[this.entries.length - 1];
    return last === undefined ? 0 : last.offset + last.columns.length;
  }

  add(alias: string, columns: readonly ScopeColumn[], tableName?: string): RangeEntry {
    if (this.entries.some((e) => e.alias === alias)) throw invalid(`table name "${alias}" specified more than once`);
    const entry: RangeEntry = { alias, columns, offset: this.width, ...(tableName === undefined ? {} : { tableName }) };
    this.entries.push(entry);
    for (let i = 0; i < columns.length; i++) this.starOrder.push(entry.offset + i);
    return entry;
  }

  /** The column at a row slot. */
  columnAt(slot: number): ScopeColumn {
    const entry = this.entries.find((e) => slot >= e.offset && slot < e.offset + e.columns.length);
    assert(entry !== undefined, `Scope.columnAt: no column at slot ${slot}`);
    return entry.columns[slot - entry.offset]!;
  }

  /**
   * A scope for a part of this query bound on its own (a subquery or VALUES in FROM, a CTE body,
   * a member of a set operation): it sees this query's CTEs and the enclosing queries but not
   * this query's FROM items, and a column of an enclosing query is at the depth it has from
   * here, since the part runs inside this query's plan with the same outer rows.
   */
  sibling(): Scope {
    const s = new Scope(this.parent);
    for (const [name, cte] of this.ctes) s.ctes.set(name, cte);
    return s;
  }

  /** Takes over a sibling's references to enclosing queries (which make a subquery correlated). */
  adopt(sibling: Scope): void {
    if (sibling.usedOuter) this.usedOuter = true;
  }

  cte(name: string): CteDef | undefined {
    for (let s: Scope | null = this; s; s = s.parent) {
      const found = s.ctes.get(name);
      if (found) return found;
    }
    return undefined;
  }

  /** Resolves [table.]column here or in an enclosing scope: depth 0 is this scope. */
  resolve(table: string | null, column: string): { depth: number; index: number; column: ScopeColumn } {
    let depth = 0;
    for (let s: Scope | null = this; s; s = s.parent, depth++) {
      const found = s.lookup(table, column);
      if (found) {
        if (depth > 0) {
          this.markOuter(depth);
          s.referencedFromInner = true;
        }
        return { depth, ...found };
      }
    }
    if (table !== null && !this.hasAlias(table)) throw missingFromClause(table);
    throw columnNotFound(column, table === null ? {} : { qualifier: table });
  }

  private hasAlias(table: string): boolean {
    for (let s: Scope | null = this; s; s = s.parent) if (s.entries.some((e) => e.alias === table || e.tableName === table)) return true;
    return false;
  }

  private markOuter(depth: number): void {
    let s: Scope | null = this;
    for (let d = 0; d < depth && s; d++, s = s.parent) s.usedOuter = true;
  }

  lookup(table: string | null, column: string): { index: number; column: ScopeColumn } | null {
    let found: { index: number; column: ScopeColumn } | null = null;
    for (const entry of this.entries) {
      if (table !== null && entry.alias !== table && entry.tableName !== table) continue;
      entry.columns.forEach((c, i) => {
        if (c.name !== column || (table === null && c.hidden)) return;
        if (found) throw invalid(`column reference "${column}" is ambiguous`, { column });
        found = { index: entry.offset + i, column: c };
      });
      if (table !== null && found) break;
    }
    return found;
  }

  entry(table: string): RangeEntry | undefined {
    return this.entries.find((e) => e.alias === table || e.tableName === table);
  }
}

/** Columns renamed by an alias list `AS x(a, b)`: the first ones renamed, the rest kept. */
export function renamedColumns(columns: readonly ScopeColumn[], names: readonly string[] | null | undefined): ScopeColumn[] {
  if (!names) return [...columns];
  if (names.length > columns.length) throw invalid(`table has ${columns.length} columns available but ${names.length} columns specified`);
  return columns.map((c, i) => (i < names.length ? { ...c, name: names[i]! } : c));
}

function missingFromClause(table: string): SvcError {
  return new SvcError('TABLE_NOT_FOUND', `missing FROM-clause entry for table "${table}"`, { table });
}
