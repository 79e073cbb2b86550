import { describe, expect, it } from 'vitest';
import type { TableDef, TableId } from '../../core/catalog.js';
import { CatalogState } from '../../projections/catalog-state.js';

/**
 * CatalogState.tableByName remembers the last name it found (REST requests name one table again and
 * again): every change of the names — a table made, altered, renamed, dropped, made again under
 * another id, the same name in another tenant or schema — must be seen by the very next lookup.
 */
describe('CatalogState.tableByName', () => {
  const def = (id: number, name: string, tenant = 'default', schema = 'public', columns = 1): TableDef => ({
    id: id as TableId,
    tenant,
    schema,
    name,
    kind: 'table',
    columns: Array.from({ length: columns }, (_, i) => ({
      id: i + 1,
      name: `c${i}`,
      type: { name: 'int8' },
      nullable: false,
      default: null,
    })) as unknown as TableDef['columns'],
    primaryKey: [],
    indexes: [],
    constraints: [],
    viewSql: null,
    createdAtMicros: 0n,
    updatedAtMicros: 0n,
  });
  const idOf = (catalog: CatalogState, name: string, tenant = 'default', schema = 'public'): number | undefined =>
    catalog.tableByName(tenant, schema, name)?.def.id;

  it('follows tables made, altered, renamed, dropped and made again, per tenant and schema', () => {
    const catalog = new CatalogState();
    expect(idOf(catalog, 't')).toBeUndefined();
    catalog.putTable(def(1, 't'));
    expect(idOf(catalog, 't')).toBe(1);
    expect(idOf(catalog, 't')).toBe(1);
    // Altered (a new definition under the same id): the new entry, not the remembered one.
    catalog.putTable(def(1, 't', 'default', 'public', 3));
    expect(catalog.tableByName('default', 'public', 't')!.def.columns).toHaveLength(3);
    // The same name elsewhere is another table (or none).
    expect(idOf(catalog, 't', 'acme')).toBeUndefined();
    expect(idOf(catalog, 't', 'default', 'other')).toBeUndefined();
    catalog.putTable(def(2, 't', 'acme'));
    expect(idOf(catalog, 't', 'acme')).toBe(2);
    expect(idOf(catalog, 't')).toBe(1);
    // Renamed: the old name is gone at once, the new one found.
    catalog.putTable(def(1, 'u'));
    expect(idOf(catalog, 't')).toBeUndefined();
    expect(idOf(catalog, 'u')).toBe(1);
    // Dropped, then made again under another id.
    catalog.dropTable(1 as TableId);
    expect(idOf(catalog, 'u')).toBeUndefined();
    catalog.putTable(def(3, 'u'));
    expect(idOf(catalog, 'u')).toBe(3);
    catalog.dropTable(3 as TableId);
    expect(idOf(catalog, 'u')).toBeUndefined();
    expect(idOf(catalog, 't', 'acme')).toBe(2);
  });
});
