import { DEFAULT_SCHEMA, type TableDef } from '../../core/catalog.js';
import { SvcError, tableNotFound } from '../../core/errors.js';
import type { CatalogState, TableEntry } from '../../projections/index.js';
import type { QType, TypeSystem } from '../types/contract.js';
import type { QueryExpr } from '../parse/index.js';

/** Everything binding one statement needs; one per statement. */
export class BindContext {
  /** Types of $1..$n as inferred so far (index 0 is $1). */
  readonly paramTypes: (QType | undefined)[] = [];
  /** Table definitions read: a cached plan is valid while these are current. */
  readonly tablesUsed = new Map<number, TableDef>();
  private nextSubqueryId = 1;
  /** Views being expanded (to refuse a view defined through itself). */
  readonly expanding: string[] = [];
  /** Subquery expressions being bound around the current point (a recursive CTE may not be read in one). */
  sublinkDepth = 0;
  /** The CTE name of each working-table reference bound so far, in order (recursive-cte.ts). */
  readonly worktableRefs: string[] = [];

  constructor(
    readonly types: TypeSystem,
    readonly catalog: CatalogState,
    readonly tenant: string,
    /** A view's stored query text to its query (views are bound where they are read). */
    readonly parseView: (sql: string) => QueryExpr,
  ) {}

  subqueryId(): number {
    return this.nextSubqueryId++;
  }

  /** A table or view by name; schema defaults to public. */
  findTable(schema: string | null, name: string): TableEntry | undefined {
    const entry = this.catalog.tableByName(this.tenant, schema ?? DEFAULT_SCHEMA, name);
    if (entry) this.tablesUsed.set(entry.def.id, entry.def);
    return entry;
  }

  table(schema: string | null, name: string): TableEntry {
    const entry = this.findTable(schema, name);
    if (!entry) throw tableNotFound(relationLabel(schema, name));
    return entry;
  }

  paramType(index: number): QType | undefined {
    return this.paramTypes[index];
  }

  setParamType(index: number, type: QType): void {
    this.paramTypes[index] = type;
  }
}

/** A relation as the statement named it: `name`, or `schema.name` when it was qualified. */
export function relationLabel(schema: string | null, name: string): string {
  return schema === null ? name : `${schema}.${name}`;
}

export function invalid(message: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('INVALID_QUERY', message, details);
}

export function mismatch(message: string, details: Record<string, unknown> = {}): SvcError {
  return new SvcError('TYPE_MISMATCH', message, details);
}
