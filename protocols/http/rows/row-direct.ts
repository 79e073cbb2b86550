import type { RowRouteDeps } from './rows-routes.js';
import { rowJson } from '../json-reply.js';
import { tableRefOf } from '../tables/table-ref.js';
import { ROW_ANSWER_WRAP } from './row-routes.js';
import { idParts } from './row-id.js';
import { selectColumns } from './rows-sql.js';

/**
 * `{table}/rows/{id}` after /api/v1/tables/, as the direct path takes it: names and ids whose URL
 * text is their value (no percent-escape, no comma: one key column), within the route's 200
 * characters. Any other URL is fastify's (its router decodes, its schema refuses).
 */
const ROW_PATH = /^([A-Za-z0-9_.-]{1,200})\/rows\/([A-Za-z0-9_.~-]{1,200})$/;

/**
 * GET /tables/{t}/rows/{id} on the direct path (protocols/http/direct/direct-lane.ts): the same read
 * as the route's (row-routes.ts) when the store answers at once — the whole answer's text, kept with
 * the row — else undefined, and the route answers (no such table or row, a wait at the read barrier,
 * the SQL path). Throws where the route would answer an error (the direct path then hands it over).
 */
export function directRow(deps: RowRouteDeps, prefix: string): (tenant: string, url: string) => string | undefined {
  return (tenant, url) => {
    const path = ROW_PATH.exec(url.slice(prefix.length));
    if (path === null) return undefined;
    const ref = tableRefOf(path[1]!);
    const entry = deps.catalog.tableByName(tenant, ref.schema, ref.name);
    if (entry === undefined) return undefined;
    const read = deps.engine.readTextByKey(
      { table: entry.def, key: idParts(entry.def, url), columns: selectColumns(entry.def, undefined) },
      rowJson,
      ROW_ANSWER_WRAP,
    );
    if (typeof read === 'string') return read;
    // A read that waits (the read barrier) is made again by the route, which answers it.
    if (read instanceof Promise) read.catch(() => undefined);
    return undefined;
  };
}
