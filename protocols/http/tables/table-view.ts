import type { ConstraintKind, TableDef } from '../../../core/catalog.js';
import { sqlTypeText } from '../../../core/values.js';
import type { TableEntry } from '../../../projections/index.js';
import { isoOfMicros } from './table-ref.js';

/** How GET /tables and GET /tables/{name} render a table (docs/api.md, "Tables and rows"). */

/** A view stores no rows: its counts are null (counting would run its query); a materialized view's are its stored rows. */
function counts(entry: TableEntry): { row_count: number | null; size_bytes: number | null } {
  if (entry.def.kind === 'view') return { row_count: null, size_bytes: null };
  return { row_count: entry.stats.rowCount, size_bytes: entry.stats.sizeBytes };
}

/** One element of GET /tables. */
export function tableSummary(entry: TableEntry): Record<string, unknown> {
  const { def } = entry;
  return {
    name: def.name,
    schema: def.schema,
    type: def.kind,
    ...counts(entry),
    created_at: isoOfMicros(def.createdAtMicros),
    updated_at: isoOfMicros(def.updatedAtMicros),
  };
}

const CONSTRAINT_TYPES: Readonly<Record<ConstraintKind, string>> = {
  primary_key: 'primary_key',
  unique: 'unique',
  check: 'check',
  foreign_key: 'foreign_key',
  not_null: 'not_null',
};

function columnName(def: TableDef, id: number): string {
  return def.columns.find((c) => c.id === id)?.name ?? `#${id}`;
}

/** GET /tables/{name}: columns, indexes, constraints and statistics. */
export function tableDetail(entry: TableEntry, now: Date): Record<string, unknown> {
  const { def } = entry;
  const pk = new Set(def.primaryKey);
  const isTable = def.kind !== 'view';
  return {
    name: def.name,
    schema: def.schema,
    type: def.kind,
    columns: def.columns.map((c) => ({
      name: c.name,
      type: sqlTypeText(c.type),
      nullable: c.nullable,
      default: c.defaultExpr === null ? null : unwrapped(c.defaultExpr),
      is_primary_key: pk.has(c.id),
    })),
    indexes: def.indexes.map((i) => ({
      name: i.name,
      type: i.kind,
      columns: i.columnIds.map((id) => columnName(def, id)),
      unique: i.unique,
      primary: i.primary,
      ...(Object.keys(i.options).length > 0 ? { options: { ...i.options } } : {}),
    })),
    constraints: def.constraints.map((c) => ({ name: c.name, type: CONSTRAINT_TYPES[c.kind], definition: c.definition })),
    statistics: {
      ...counts(entry),
      index_size_bytes: isTable ? entry.stats.indexSizeBytes : null,
      // Statistics are kept current on every applied write: as of now, not of an ANALYZE.
      last_analyzed: now.toISOString(),
    },
    created_at: isoOfMicros(def.createdAtMicros),
    updated_at: isoOfMicros(def.updatedAtMicros),
  };
}

/**
 * SQL LIKE as a predicate on names: % any run, _ one character, backslash escapes the next
 * character; the whole name must match; case-sensitive, as in PostgreSQL.
 */
export function likeMatcher(pattern: string): (name: string) => boolean {
  const chars = Array.from(pattern);
  let source = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) source += escapeRegex(chars[++i]!);
    else if (c === '%') source += '[\\s\\S]*';
    else if (c === '_') source += '[\\s\\S]';
    else source += escapeRegex(c);
  }
  const re = new RegExp(`^${source}$`, 'u');
  return (name) => re.test(name);
}

function escapeRegex(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/** `(expr)` as `expr`: DEFAULTs are stored as the parser prints them, inside one pair of parentheses. */
export function unwrapped(text: string): string {
  if (!text.startsWith('(') || !text.endsWith(')')) return text;
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") quoted = !quoted;
    else if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')' && --depth === 0 && i < text.length - 1) return text;
  }
  return text.slice(1, -1);
}
