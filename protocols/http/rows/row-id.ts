import type { TableDef } from '../../../core/catalog.js';
import { SvcError } from '../../../core/errors.js';
import { primaryKeyNames } from '../tables/table-ref.js';

/**
 * The {id} of /tables/{t}/rows/{id}: the primary key's values in key order, separated by commas,
 * each percent-encoded (a comma inside a value is %2C). Read from the raw URL: the router decodes
 * %2C to a comma, after which a value's comma and a separator could not be told apart.
 */
export function idParts(table: TableDef, rawUrl: string): string[] {
  const names = primaryKeyNames(table);
  if (names.length === 0) {
    throw new SvcError(
      'INVALID_QUERY',
      `table "${table.name}" has no primary key: address its rows with a filter (GET/PUT/DELETE /tables/${table.name}/rows)`,
      { table: table.name, reason: 'no_primary_key' },
    );
  }
  const query = rawUrl.indexOf('?');
  const path = query < 0 ? rawUrl : rawUrl.slice(0, query);
  const segment = path.slice(path.lastIndexOf('/') + 1);
  // The common id: one key column, no comma and no escape in it: the segment is the id.
  if (names.length === 1 && !segment.includes(',') && !segment.includes('%')) return [segment];
  const parts = segment.split(',').map((part) => {
    // Only an escape changes a part (a plain id is most ids: no decoding to pay for).
    if (!part.includes('%')) return part;
    try {
      return decodeURIComponent(part);
    } catch (error) {
      if (!(error instanceof URIError)) throw error;
      throw new SvcError('INVALID_QUERY', 'the row id is not valid percent-encoding', { reason: 'bad_url' });
    }
  });
  if (parts.length !== names.length) {
    const form =
      names.length === 1 ? `the value of ${names[0]}` : `${names.length} values (${names.join(', ')}) separated by commas, a comma inside a value as %2C`;
    throw new SvcError('INVALID_QUERY', `the id of a row of "${table.name}" is ${form}; got ${parts.length} value(s)`, {
      table: table.name,
      primary_key: names,
      reason: 'id_parts',
    });
  }
  return parts;
}
