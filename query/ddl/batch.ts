import { SvcError, isSvcError } from '../../core/errors.js';
import type { TxnOp } from '../../core/log-records.js';
import { CatalogState, type WriteView } from '../../projections/index.js';
import { parseSql, type ParsedStatement } from '../parse/index.js';
import type { ReadOnlyReason } from '../engine-options.js';
import { refuseWrite } from '../statement-guards.js';
import { catalogRecord } from './common.js';
import type { DdlDeps, DdlSubmit } from './deps.js';
import { executeDdl } from './index.js';

/** Statement kinds a batch may hold: what a table definition and its alterations are made of. */
const BATCHABLE = new Set(['create_table', 'create_index', 'alter_table']);

/** True when the statement may be part of a DDL batch. */
export function isBatchable(statement: ParsedStatement): boolean {
  return statement.explain === null && BATCHABLE.has(statement.body.kind);
}

/**
 * A view over the writer's view whose catalog also holds what earlier statements of the batch
 * defined: each statement validates against the state the ones before it leave. Rows are the
 * writer's (DDL does not change rows; a table created in the batch has none).
 */
export class StagedView {
  readonly catalog = new CatalogState();
  private readonly sequences = new Map<string, bigint>();
  readonly view: WriteView;

  constructor(base: WriteView) {
    for (const entry of base.catalog.tables()) this.catalog.putTable(entry.def, { ...entry.stats });
    // The ids ever used, dropped tables' and columns' included: a staged CREATE or ADD COLUMN allocates above them.
    this.catalog.raiseIds(base.catalog.idsHigh);
    for (const [name, value] of base.catalog.sequenceEntries()) this.catalog.setSequence(name, value);
    this.view = { ...base, catalog: this.catalog, sequence: (name) => this.sequences.get(name) ?? base.sequence(name) };
  }

  apply(ops: readonly TxnOp[]): void {
    for (const op of ops) {
      if (op.kind === 'put_table') this.catalog.putTable(op.table);
      else if (op.kind === 'drop_table') this.catalog.dropTable(op.tableId);
      else if (op.kind === 'sequence') this.sequences.set(op.name, op.lastValue);
    }
  }
}

/** The error of statement `index`, with `details.statement_index` so a caller can say which part failed. */
export function atStatement(error: unknown, index: number): unknown {
  if (!isSvcError(error)) return error;
  return new SvcError(error.code, error.message, { ...error.details, statement_index: index }, error.cause);
}

/**
 * The statements of a batch, one per text: each text must parse to exactly one CREATE TABLE,
 * CREATE INDEX or ALTER TABLE (generated DDL cannot carry another statement), refused as a write
 * when the caller is read-only; an error names its text (details.statement_index).
 */
export function parseDdlBatch(texts: readonly string[], readOnly: ReadOnlyReason | null): ParsedStatement[] {
  return texts.map((text, index) => {
    let parsed: ParsedStatement[];
    try {
      parsed = parseSql(text);
    } catch (error) {
      throw atStatement(error, index);
    }
    if (parsed.length !== 1 || !isBatchable(parsed[0]!)) {
      throw new SvcError('INVALID_QUERY', `statement ${index} of the batch is not exactly one CREATE TABLE, CREATE INDEX or ALTER TABLE`, {
        statement_index: index,
      });
    }
    if (readOnly) refuseWrite(parsed[0]!, readOnly);
    return parsed[0]!;
  });
}

/** What a batch runs with: DdlDeps but the statement, with a bind context per statement (its VECTOR(n) dimensions). */
export type DdlBatchDeps = Omit<DdlDeps, 'statement' | 'submit' | 'bindContext'> & {
  bindContextOf(statement: ParsedStatement): DdlDeps['bindContext'];
};

/**
 * Runs DDL statements as ONE log record under one write lock: each validates against the catalog
 * the previous ones leave, and the record holds all their changes in order, so the batch applies
 * completely or not at all. Resolves to whether anything changed (IF NOT EXISTS may change nothing).
 */
export async function runDdlBatch(statements: readonly ParsedStatement[], base: DdlBatchDeps): Promise<boolean> {
  let changed = false;
  await base.projections.sequencer.submit(async (view) => {
    const staged = new StagedView(view);
    const ops: TxnOp[] = [];
    const submit: DdlSubmit = async (build) => {
      const built = await build(staged.view);
      if (built) {
        ops.push(...built.record.ops);
        staged.apply(built.record.ops);
      }
      return { lsn: null, result: built?.result ?? null };
    };
    for (const [index, statement] of statements.entries()) {
      try {
        const { bindContextOf, ...rest } = base;
        await executeDdl(statement, { ...rest, statement, submit, bindContext: bindContextOf(statement) });
      } catch (error) {
        throw atStatement(error, index);
      }
    }
    if (ops.length === 0) return null;
    changed = true;
    return { record: catalogRecord(base.env.tenant, ops), result: null };
  });
  return changed;
}
