import { LIMITS } from './limits.js';

/** The plan cache key of a text that is exactly one plain SELECT (nothing to parse to know it). */
export function plainSelectKey(tenant: string, sql: string): string {
  return `\u0001${tenant}\u0000${sql}`;
}

/**
 * plainSelectKey with the last key made kept, with its tenant and text: a text sent again and
 * again (a point SELECT under load) finds its key by one comparison instead of a new string
 * hashed on every lookup. One per engine (SqlEngine.plainKeys): a method call, as it was when
 * this was the engine's own method, so the point SELECT path gains no call.
 */
export class PlainSelectKeys {
  private last = { tenant: '', sql: '', key: plainSelectKey('', '') };

  of(tenant: string, sql: string): string {
    const last = this.last;
    if (last.sql === sql && last.tenant === tenant) return last.key;
    const key = plainSelectKey(tenant, sql);
    // Only a text the plan cache may hold is kept (one string, however long the last text was, would be kept otherwise).
    if (sql.length <= LIMITS.planCacheTextBytesMax) this.last = { tenant, sql, key };
    return key;
  }
}
