import { SvcError } from '../core/errors.js';
import type { TableDef } from '../core/catalog.js';
import type { CatalogState } from '../projections/index.js';
import { BindContext, QueryBinder, Scope, uniqueNames } from './bind/index.js';
import { parseExpression, parseSql, type ParsedStatement, type QueryExpr } from './parse/index.js';
import type { Plan } from './plan/nodes.js';
import { optimize } from './optimize/index.js';
import type { QType, QValue, TypeSystem } from './types/contract.js';
import { evictSecondChance } from './second-chance.js';

/** A SELECT bound and optimized: cacheable while the tables it read keep their definitions. */
export interface PreparedQuery {
  readonly plan: Plan;
  /** Unique output names. */
  readonly names: readonly string[];
  readonly paramTypes: readonly QType[];
  readonly tablesUsed: ReadonlyMap<number, TableDef>;
  /** Row counts the plan was costed with (a plan is redone when they change a lot). */
  readonly rowCounts: ReadonlyMap<number, number>;
  readonly planningTimeMs: number;
}

/** The context binding one statement needs (the statement itself is no longer read: its AST carries everything). */
export function newBindContext(types: TypeSystem, catalog: CatalogState, tenant: string, _statement?: ParsedStatement | null): BindContext {
  return new BindContext(types, catalog, tenant, parseViewSql);
}

/** A view's stored query text back to its query. */
function parseViewSql(sql: string): QueryExpr {
  const [statement] = parseSql(sql);
  if (statement?.body.kind !== 'query') throw new SvcError('INVALID_QUERY', 'view definition is not a query', {});
  return statement.body.query;
}

/** Binds and optimizes a query. */
export function prepareQuery(query: QueryExpr, ctx: BindContext, catalog: CatalogState): PreparedQuery {
  const started = performance.now();
  const bound = new QueryBinder(ctx).bindQuery(query, new Scope(null));
  const plan = optimize(bound.plan, { types: ctx.types, rowCount: (id) => catalog.table(id)?.stats.rowCount ?? 0 });
  const paramTypes = fillParamTypes(ctx.paramTypes);
  const rowCounts = new Map([...ctx.tablesUsed.keys()].map((id) => [id, catalog.table(id)?.stats.rowCount ?? 0]));
  return { plan, names: uniqueNames(bound.names), paramTypes, tablesUsed: new Map(ctx.tablesUsed), rowCounts, planningTimeMs: performance.now() - started };
}

export function fillParamTypes(types: readonly (QType | undefined)[]): QType[] {
  // A plain loop: this runs for every statement with parameters (Array.from with a mapper is several times slower).
  const filled: QType[] = new Array<QType>(types.length);
  for (let i = 0; i < types.length; i++) filled[i] = types[i] ?? { name: 'text' };
  return filled;
}

/** Request parameters converted to the inferred types of $1..$n. */
export function convertParams(types: TypeSystem, paramTypes: readonly QType[], raw: readonly unknown[]): QValue[] {
  if (raw.length < paramTypes.length) {
    throw new SvcError(
      'INVALID_QUERY',
      `there is no parameter $${raw.length + 1}: the query uses ${paramTypes.length} parameter(s) and ${raw.length} were given`,
      { expected: paramTypes.length, given: raw.length },
    );
  }
  return raw.map((value, i) => {
    const type = paramTypes[i];
    if (value === null || value === undefined) return null;
    if (!type) return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : JSON.stringify(value);
    return types.fromJson(type, value);
  });
}

/** Row counts that changed enough to change a costed choice (doubled or halved, by more than 50 rows). */
function statsMoved(planned: number, now: number): boolean {
  return Math.abs(now - planned) > 50 && (now > planned * 2 || now * 2 < planned);
}

/** A cached plan, and whether it was used since it was put (or moved) at the back of the order. */
interface PlanSlot {
  readonly prepared: PreparedQuery;
  /** tablesUsed with the row counts planned for, as an array: a lookup walks it without an iterator or an entry array per table. */
  readonly checks: readonly TableCheck[];
  used: boolean;
}

/** A table a cached plan read: valid while the catalog holds this very definition and its row count has not moved. */
interface TableCheck {
  readonly id: number;
  readonly def: TableDef;
  readonly plannedRows: number;
}

/**
 * A bounded cache of prepared queries by tenant and statement text, evicting by second chance
 * (CLOCK, an approximation of LRU): a hit only marks its entry, instead of moving it to the back
 * of the Map on every read (a delete and a set per point SELECT); eviction looks at the oldest
 * entries in order, sends a marked one to the back unmarked, and drops the first unmarked one.
 */
export class PlanCache {
  private readonly entries = new Map<string, PlanSlot>();
  constructor(private readonly capacity: number) {}

  get(key: string, catalog: CatalogState): PreparedQuery | undefined {
    const slot = this.entries.get(key);
    if (!slot) return undefined;
    const checks = slot.checks;
    for (let i = 0; i < checks.length; i++) {
      const check = checks[i]!;
      const entry = catalog.table(check.id);
      if (entry?.def !== check.def || statsMoved(check.plannedRows, entry.stats.rowCount)) {
        this.entries.delete(key);
        return undefined;
      }
    }
    slot.used = true;
    return slot.prepared;
  }

  set(key: string, value: PreparedQuery): void {
    this.entries.delete(key);
    const checks = [...value.tablesUsed].map(([id, def]) => ({ id, def, plannedRows: value.rowCounts.get(id) ?? 0 }));
    this.entries.set(key, { prepared: value, checks, used: false });
    while (this.entries.size > this.capacity) evictSecondChance(this.entries);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether `key` is held (without marking it used). */
  has(key: string): boolean {
    return this.entries.has(key);
  }
}

export { parseExpression };
