import type { TableDef } from '../../core/catalog.js';
import { SvcError } from '../../core/errors.js';
import type { QValue, TypeSystem } from '../types/contract.js';

export function notNullViolation(table: string, column: string): SvcError {
  return new SvcError('CONSTRAINT_VIOLATION', `null value in column "${column}" of relation "${table}" violates not-null constraint`, {
    table,
    column,
    constraint: `${table}_${column}_not_null`,
  });
}

export function checkViolation(table: string, constraint: string): SvcError {
  return new SvcError('CONSTRAINT_VIOLATION', `new row for relation "${table}" violates check constraint "${constraint}"`, { table, constraint });
}

export function uniqueViolation(table: string, constraint: string, key: string): SvcError {
  return new SvcError('CONSTRAINT_VIOLATION', `duplicate key value violates unique constraint "${constraint}"`, {
    table,
    constraint,
    key,
    detail: `Key ${key} already exists.`,
  });
}

export function fkChildViolation(table: string, constraint: string, key: string, parent: string): SvcError {
  return new SvcError('CONSTRAINT_VIOLATION', `insert or update on table "${table}" violates foreign key constraint "${constraint}"`, {
    table,
    constraint,
    key,
    detail: `Key ${key} is not present in table "${parent}".`,
  });
}

export function fkParentViolation(table: string, constraint: string, child: string, key: string): SvcError {
  return new SvcError('CONSTRAINT_VIOLATION', `update or delete on table "${table}" violates foreign key constraint "${constraint}" on table "${child}"`, {
    table,
    constraint,
    referencing_table: child,
    key,
    detail: `Key ${key} is still referenced from table "${child}".`,
  });
}

/** The primary key's constraint name (PostgreSQL's default `<table>_pkey` when it has none of its own). */
export function primaryKeyName(table: TableDef): string {
  return table.indexes.find((i) => i.primary)?.name ?? `${table.name}_pkey`;
}

/** A violation's key text as PostgreSQL words it: `(a, b)=(1, x)`, each value in the column type's text form. */
export function keyDetail(table: TableDef, types: TypeSystem, positions: readonly number[], values: readonly QValue[]): string {
  const names = positions.map((p) => table.columns[p]!.name).join(', ');
  const shown = positions
    .map((p) => {
      const v = values[p] ?? null;
      return v === null ? 'null' : types.formatText(table.columns[p]!.type, v);
    })
    .join(', ');
  return `(${names})=(${shown})`;
}
