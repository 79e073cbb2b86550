/**
 * One DML statement's writes: its per-table writers (writer.ts TableWriter validates and encodes each
 * table's row changes), the row ops in order, the sequence values it took, its foreign-key checks.
 */
import type { TableDef, TableId } from '../../core/catalog.js';
import type { RowChange, SequenceUpdate, TxnOp } from '../../core/log-records.js';
import type { CatalogState, WriteView } from '../../projections/index.js';
import type { TypeSystem } from '../types/contract.js';
import { limitExceededRows } from './limits.js';
import { ForeignKeys } from './foreign-keys.js';
import { TableWriter, type CheckEval, type WriterStatement } from './writer.js';

/**
 * How an engine's statements wrote their rows, counted since it started (SqlEngine.insertPathStats()):
 * one object per engine, handed to each statement's writer.
 */
export class WriteCounts {
  /** Single-row inserts of a new highest key written without a read or a promise (TableWriter.insertKnownNew). */
  knownNew = 0;
}

/** All changes of one DML statement: per-table writers, the row ops in order, sequence values. */
export class StatementWriter implements WriterStatement {
  readonly ops: TxnOp[] = [];
  private readonly writers = new Map<TableId, TableWriter>();
  /** Sequence values taken (nextval), made at the first: most statements take none. */
  private sequenceValues: Map<string, bigint> | null = null;
  private foreignKeys: ForeignKeys | null = null;
  changed = 0;

  constructor(
    readonly view: WriteView,
    readonly types: TypeSystem,
    private readonly checksOf: (table: TableDef) => CheckEval[],
    /** Rows this statement may change (SqlLimits.dmlRowsMax). */
    private readonly dmlRowsMax: number,
    /** In a transaction: what the statement reads is tracked (a range read would be a conflict over the whole range). */
    readonly inTransaction = false,
    /** The engine's write counts; null: not counted. */
    readonly counts: WriteCounts | null = null,
  ) {}

  /** Foreign-key checks of this statement, made when a table with a foreign key or a parent row is written. */
  get fks(): ForeignKeys {
    this.foreignKeys ??= new ForeignKeys(this);
    return this.foreignKeys;
  }

  get catalog(): CatalogState {
    return this.view.catalog;
  }

  writer(table: TableDef): TableWriter {
    let w = this.writers.get(table.id);
    if (!w) this.writers.set(table.id, (w = new TableWriter(table, this, () => this.checksOf(table))));
    return w;
  }

  existingWriter(tableId: TableId): TableWriter | undefined {
    return this.writers.get(tableId);
  }

  nextval(name: string): bigint {
    const sequences = (this.sequenceValues ??= new Map());
    const next = (sequences.get(name) ?? this.view.sequence(name) ?? 0n) + 1n;
    sequences.set(name, next);
    return next;
  }

  /** Some sequence value was taken (nextval): sequenceOps() is not empty. */
  get hasSequences(): boolean {
    return this.sequenceValues !== null && this.sequenceValues.size > 0;
  }

  sequenceOps(): SequenceUpdate[] {
    if (this.sequenceValues === null) return [];
    return [...this.sequenceValues].map(([name, lastValue]) => ({ kind: 'sequence', name, lastValue }));
  }

  push(op: RowChange): void {
    this.changed += 1;
    if (this.changed > this.dmlRowsMax) throw limitExceededRows(this.dmlRowsMax);
    this.ops.push(op);
  }
}
