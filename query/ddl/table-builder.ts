import type { ColumnDef, ConstraintDef, ForeignKeyAction, IndexDef, TableDef } from '../../core/catalog.js';
import { tableNotFound } from '../../core/errors.js';
import type { CatalogState } from '../../projections/index.js';
import { bindCheck, identName, invalid, type BindContext } from '../bind/index.js';
import { exprSql, PK_MARKER, type AstNode } from '../parse/index.js';
import { columnsOf } from '../plan/expr-util.js';
import { alreadyExists, btreeIndex, columnByName, freeName, keyConstraint, tableRef, type IdAllocator } from './common.js';

const ACTIONS: Record<string, ForeignKeyAction> = { cascade: 'cascade', restrict: 'restrict', 'set null': 'set_null', 'no action': 'no_action' };

/** Collects constraints of a table being created or altered and turns them into catalog entries. */
export class ConstraintBuilder {
  readonly checks: { name: string | null; ast: AstNode; column: string | null }[] = [];
  readonly uniques: { name: string | null; columns: string[] }[] = [];
  readonly foreignKeys: { name: string | null; columns: string[]; ref: AstNode }[] = [];
  primaryKey: string[] | null = null;

  constructor(
    private readonly ctx: BindContext,
    private readonly catalog: CatalogState,
    private readonly taken: Set<string>,
  ) {}

  /** A table-level constraint node (CREATE TABLE or ALTER TABLE ADD CONSTRAINT). */
  addTableConstraint(node: AstNode): void {
    const name = node.constraint ? identName(node.constraint) : null;
    const type = String(node.constraint_type).toLowerCase();
    const columns = (node.definition as AstNode[] | undefined)?.map((c) => identName(c.column ?? c)) ?? [];
    if (type === 'primary key') this.setPrimaryKey(columns);
    else if (type === 'unique' || type === 'unique key') this.uniques.push({ name, columns });
    else if (type === 'check') this.checks.push({ name, ast: node.definition[0], column: null });
    else if (type === 'foreign key') this.foreignKeys.push({ name, columns, ref: node.reference_definition });
    else throw invalid(`unsupported constraint type ${String(node.constraint_type)}`);
  }

  setPrimaryKey(columns: string[]): void {
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

  private checkConstraint(table: TableDef, c: { name: string | null; ast: AstNode; column: string | null }): ConstraintDef {
    const bound = bindCheck(this.ctx, table, c.ast);
    const cols = [...columnsOf(bound)].sort((a, b) => a - b).map((i) => table.columns[i]!);
    const column = c.column ?? (cols.length === 1 ? cols[0]!.name : null);
    const name = this.name(c.name, column ? `${table.name}_${column}_check` : `${table.name}_check`);
    return { name, kind: 'check', definition: exprSql(c.ast), columnIds: cols.map((col) => col.id) };
  }

  private foreignKey(table: TableDef, fk: { name: string | null; columns: string[]; ref: AstNode }, pk: number[], newIndexes: IndexDef[]): ConstraintDef {
    const { schema, name } = tableRef(fk.ref.table[0]);
    const self = schema === table.schema && name === table.name;
    const target = self ? table : this.catalog.tableByName(table.tenant, schema, name)?.def;
    if (!target || target.kind !== 'table') throw tableNotFound(name);
    const refNames = (fk.ref.definition as AstNode[]).map((c) => identName(c.column ?? c));
    const targetPk = self ? pk : target.primaryKey;
    const refCols =
      refNames.length === 1 && refNames[0] === PK_MARKER
        ? targetPk.map((id) => target.columns.find((c) => c.id === id)!)
        : refNames.map((n) => columnByName(target, n));
    if (refCols.length === 0) throw invalid(`there is no primary key for referenced table "${target.name}"`);
    const cols = fk.columns.map((n) => columnByName(table, n));
    if (cols.length !== refCols.length) throw invalid('number of referencing and referenced columns for foreign key disagree');
    const refIds = refCols.map((c) => c.id);
    const indexes = self ? [...table.indexes, ...newIndexes] : target.indexes;
    const keyed = (self ? pk : target.primaryKey).join(',') === refIds.join(',') || indexes.some((i) => i.unique && i.columnIds.join(',') === refIds.join(','));
    if (!keyed) throw invalid(`there is no unique constraint matching given keys for referenced table "${target.name}"`);
    const action = String(fk.ref.on_action?.find((a: AstNode) => String(a.type).toLowerCase() === 'on delete')?.value?.value ?? 'no action').toLowerCase();
    const onDelete = ACTIONS[action] ?? 'no_action';
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
