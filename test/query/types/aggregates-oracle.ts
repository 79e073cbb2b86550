/** Aggregate differential cases: `SELECT (SELECT agg(x) FROM (VALUES ...) v(x))::text` on both sides. */

export interface AggCase {
  readonly agg: string;
  readonly values: readonly string[];
  readonly extra?: string;
  readonly distinct?: boolean;
}

/** The statement a case runs as, on PostgreSQL and on the engine alike. */
export function aggregateSql(c: AggCase): string {
  const extra = c.extra === undefined ? '' : `, ${c.extra}`;
  const rows = c.values.map((v) => `(${v})`).join(', ');
  return `SELECT (SELECT ${c.agg}(${c.distinct ? 'DISTINCT ' : ''}x${extra}) FROM (VALUES ${rows}) v(x))::text`;
}
