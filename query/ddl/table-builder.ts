import type { ColumnDef, ConstraintDef, ForeignKeyAction, IndexDef, TableDef } from '../../core/catalog.js';
import { tableNotFound } from '../../core/errors.js';
import type { CatalogState } from '../../projections/index.js';
import { bindCheck, invalid, type BindContext } from '../bind/index.js';
import { exprSql, type ForeignKeyRef, type ReferentialAction, type SqlExpr, type TableConstraint } from '../parse/index.js';
import { columnsOf } from '../plan/expr-util.js';
import { alreadyExists, btreeIndex, columnByName, freeName, keyConstraint, schemaOf, type IdAllocator } from './common.js';

const ACTIONS: Partial<Record<ReferentialAction, ForeignKeyAction>> = {
  cascade: 'cascade',
  restrict: 'restrict',
  set_null: 'set_null',
  no_action: 'no_action',
};

type Fk = { name: string | null; columns: readonly string[]; ref: ForeignKeyRef };
type Check = { name: string | null; expr: SqlExpr; column: string | null };

/** Collects constraints of a table being created or altered and turns them into catalog entries. */
export class ConstraintBuilder {
  readonly checks: Check[] = [];
  readonly uniques: { name: string | null; columns: readonly string[] }[] = [];
  readonly foreignKeys: Fk[] = [];
  primaryKey: readonly string[] | null = null;

  constructor(
    private readonly ctx: BindContext,
    private readonly catalog: CatalogState,
    private readonly taken: Set<string>,
  ) {}

  /** A table-level constraint (CREATE TABLE or ALTER TABLE ADD CONSTRAINT). */
  addTableConstraint(node: TableConstraint): void {
    if (node.kind === 'primary_key') this.setPrimaryKey(node.columns);
    else if (node.kind === 'unique') this.uniques.push({ name: node.name, columns: node.columns });
    else if (node.kind === 'check') this.checks.push({ name: node.name, expr: node.expr, column: null });
    else this.foreignKeys.push({ name: node.name, columns: node.columns, ref: node.ref });
  }

  setPrimaryKey(columns: readonly string[]): void {
    if (this.primaryKey) throw invalid('multiple primary keys for table are not allowed');
    this.primaryKey = columns;
  }

  /** Indexes and constraints for `table` (whose columns are final). */
  build(table: TableDef, ids: IdAllocator): { indexes: IndexDef[]; constraints: ConstraintDef[]; primaryKey: number[] } {
    const indexes: IndexDef[] = [];
    const constraints: ConstraintDef[] = [];
    let primaryKey: number[] = [...table.primaryKey];
    if (this.primaryKey) {
      if (table.primaryKey.length > 0) throw invalid(`multiple primary keys for table "${table.name}" are not allowed`);
      const cols = this.primaryKey.map((n) => columnByName(table, n));
      const name = this.name(null, `${table.name}_pkey`);
      indexes.push(
        btreeIndex(
          ids.nextIndex(),
          name,
          cols.map((c) => c.id),
          { unique: true, primary: true },
        ),
      );
      constraints.push(keyConstraint('primary_key', name, cols));
      primaryKey = cols.map((c) => c.id);
    }
    for (const u of this.uniques) {
      const cols = u.columns.map((n) => columnByName(table, n));
      const name = this.name(u.name, `${table.name}_${u.columns.join('_')}_key`);
      indexes.push(
        btreeIndex(
          ids.nextIndex(),
          name,
          cols.map((c) => c.id),
          { unique: true, primary: false },
        ),
      );
      constraints.push(keyConstraint('unique', name, cols));
    }
    for (const c of this.checks) constraints.push(this.checkConstraint(table, c));
    for (const fk of this.foreignKeys) constraints.push(this.foreignKey(table, fk, primaryKey, indexes));
    return { indexes, constraints, primaryKey };
  }

  private name(explicit: string | null, generated: string): string {
    if (explicit !== null) {
      if (this.taken.has(explicit)) throw alreadyExists('relation', explicit);
      this.taken.add(explicit);
      return explicit;
    }
    return freeName(generated, this.taken);
  }

  private checkConstraint(table: TableDef, c: Check): ConstraintDef {
    const bound = bindCheck(this.ctx, table, c.expr);
    const cols = [...columnsOf(bound)].sort((a, b) => a - b).map((i) => table.columns[i]!);
    const column = c.column ?? (cols.length === 1 ? cols[0]!.name : null);
    const name = this.name(c.name, column ? `${table.name}_${column}_check` : `${table.name}_check`);
    return { name, kind: 'check', definition: exprSql(c.expr), columnIds: cols.map((col) => col.id) };
  }

  private foreignKey(table: TableDef, fk: Fk, pk: number[], newIndexes: IndexDef[]): ConstraintDef {
    const schema = schemaOf(fk.ref.table);
    const { name } = fk.ref.table;
    const self = schema === table.schema && name === table.name;
    const target = self ? table : this.catalog.tableByName(table.tenant, schema, name)?.def;
    if (!target || target.kind !== 'table') throw tableNotFound(name);
    const targetPk = self ? pk : target.primaryKey;
    const refCols =
      fk.ref.columns === null ? targetPk.map((id) => target.columns.find((c) => c.id === id)!) : fk.ref.columns.map((n) => columnByName(target, n));
    if (refCols.length === 0) throw invalid(`there is no primary key for referenced table "${target.name}"`);
    const cols = fk.columns.map((n) => columnByName(table, n));
    if (cols.length !== refCols.length) throw invalid('number of referencing and referenced columns for foreign key disagree');
    const refIds = refCols.map((c) => c.id);
    const indexes = self ? [...table.indexes, ...newIndexes] : target.indexes;
    const keyed = (self ? pk : target.primaryKey).join(',') === refIds.join(',') || indexes.some((i) => i.unique && i.columnIds.join(',') === refIds.join(','));
    if (!keyed) throw invalid(`there is no unique constraint matching given keys for referenced table "${target.name}"`);
    const onDelete = ACTIONS[fk.ref.onDelete];
    if (!onDelete) throw invalid(`ON DELETE ${fk.ref.onDelete.replace('_', ' ').toUpperCase()} is not supported`, { reason: 'unsupported' });
    if (fk.ref.onUpdate !== 'no_action' && fk.ref.onUpdate !== 'restrict')
      throw invalid('ON UPDATE actions other than NO ACTION and RESTRICT are not supported', { reason: 'unsupported' });
    const action = onDelete.replace('_', ' ');
    const constraintName = this.name(fk.name, `${table.name}_${fk.columns.join('_')}_fkey`);
    const definition = `FOREIGN KEY (${cols.map((c) => c.name).join(', ')}) REFERENCES ${target.name}(${refCols.map((c) => c.name).join(', ')})${onDelete === 'no_action' ? '' : ` ON DELETE ${action.toUpperCase()}`}`;
    return {
      name: constraintName,
      kind: 'foreign_key',
      definition,
      columnIds: cols.map((c) => c.id),
      references: { tableId: target.id, columnIds: refIds, onDelete },
    };
  }
}

export type { ColumnDef };
