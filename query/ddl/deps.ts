import type { Projections, TxnBuilder } from '../../projections/index.js';
import type { BindContext } from '../bind/index.js';
import type { ParsedStatement } from '../parse/index.js';
import type { StatementEnv } from '../statement.js';
import type { TypeSystem } from '../types/contract.js';
import type { CatalogState } from '../../projections/index.js';

/** Runs a DDL builder under the write lock (the sequencer's submit, or a batch's staging: batch.ts). */
export type DdlSubmit = <T>(build: TxnBuilder<T>) => Promise<unknown>;

/** What a DDL statement runs with. */
export interface DdlDeps {
  readonly projections: Projections;
  readonly types: TypeSystem;
  readonly env: StatementEnv;
  readonly statement: ParsedStatement;
  /** A bind context over a catalog (the writer's view inside a builder). */
  bindContext(catalog: CatalogState): BindContext;
  /** Where the statement's record goes; default: its own record through the sequencer. */
  readonly submit?: DdlSubmit;
}

/** Submits a DDL statement's builder: one record of its own, or a part of a batch's one record. */
export function submitDdl<T>(deps: DdlDeps, build: TxnBuilder<T>): Promise<unknown> {
  return deps.submit ? deps.submit(build) : deps.projections.sequencer.submit(build);
}
