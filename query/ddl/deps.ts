import type { Projections } from '../../projections/index.js';
import type { BindContext } from '../bind/index.js';
import type { ParsedStatement } from '../parse/index.js';
import type { StatementEnv } from '../statement.js';
import type { TypeSystem } from '../types/contract.js';
import type { CatalogState } from '../../projections/index.js';

/** What a DDL statement runs with. */
export interface DdlDeps {
  readonly projections: Projections;
  readonly types: TypeSystem;
  readonly env: StatementEnv;
  readonly statement: ParsedStatement;
  /** A bind context over a catalog (the writer's view inside a builder). */
  bindContext(catalog: CatalogState): BindContext;
}
