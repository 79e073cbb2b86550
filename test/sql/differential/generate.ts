/**
 * Seeded generators for the differential test: small schemas (2-3 tables of INTEGER, BIGINT, TEXT,
 * NUMERIC(10,2) and BOOLEAN columns, nullable, a primary key and one secondary index), data with
 * NULLs and duplicates, and queries whose result is a multiset, or a list when the query has an
 * ORDER BY that is a total order (it always ends with the primary key(s)).
 * The same seed always gives the same case, so a failure is reproduced with SQL_DIFF_SEEDS=N.
 */

export type Kind = 'int' | 'bigint' | 'text' | 'num' | 'bool';

const SQL_TYPE: Record<Kind, string> = { int: 'INTEGER', bigint: 'BIGINT', text: 'TEXT', num: 'NUMERIC(10,2)', bool: 'BOOLEAN' };

export interface Column {
  readonly name: string;
  readonly kind: Kind;
}

export interface Table {
  readonly name: string;
  /** id INTEGER PRIMARY KEY first, then ref INTEGER (joins to the previous table's id), then the rest. */
  readonly columns: readonly Column[];
  readonly rowCount: number;
}

export interface GeneratedQuery {
  readonly sql: string;
  /** true: the ORDER BY is a total order and rows are compared in order. */
  readonly ordered: boolean;
}

export interface DifferentialCase {
  readonly seed: number;
  /** CREATE TABLE / CREATE INDEX / INSERT statements, in order. */
  readonly setup: readonly string[];
  readonly queries: readonly GeneratedQuery[];
  /** UPDATE/DELETE … RETURNING (compared as multisets), each followed by a full ordered read-back. */
  readonly mutations: readonly GeneratedQuery[];
}

/** mulberry32: small, fast, good enough for test data. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const WORDS = ['apple', 'Apple', 'banana', 'cherry', '', 'kiwi', 'a b', 'zeta', 'x%y', 'Zed', 'b_c'];
const BIG = ['0', '1', '-1', '9007199254740993', '-9007199254740993', '4611686018427387904', '123456789012', '-9223372036854775807'];
const KINDS: readonly Kind[] = ['int', 'bigint', 'text', 'num', 'bool'];

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

function literal(rng: Rng, kind: Kind): string {
  switch (kind) {
    case 'int':
      return String(rng.int(-5, 20));
    case 'bigint':
      return rng.pick(BIG);
    case 'text':
      return quote(rng.pick(WORDS));
    case 'num':
      return (rng.int(-3000, 3000) / 100).toFixed(2);
    case 'bool':
      return rng.pick(['true', 'false']);
  }
}

function value(rng: Rng, kind: Kind): string {
  return rng.chance(0.15) ? 'NULL' : literal(rng, kind);
}

function makeTables(rng: Rng, prefix: string): Table[] {
  const count = rng.int(2, 3);
  const tables: Table[] = [];
  for (let t = 0; t < count; t++) {
    const columns: Column[] = [
      { name: 'id', kind: 'int' },
      { name: 'ref', kind: 'int' },
    ];
    const extra = rng.int(3, 5);
    for (let c = 0; c < extra; c++) columns.push({ name: `c${c}`, kind: c < 2 ? (['int', 'text'] as const)[c]! : rng.pick(KINDS) });
    tables.push({ name: `${prefix}_t${t}`, columns, rowCount: rng.int(12, 40) });
  }
  return tables;
}

function setupStatements(rng: Rng, tables: readonly Table[]): string[] {
  const out: string[] = [];
  tables.forEach((table, t) => {
    const defs = table.columns.map((c) => (c.name === 'id' ? 'id INTEGER PRIMARY KEY' : `${c.name} ${SQL_TYPE[c.kind]}`));
    out.push(`CREATE TABLE ${table.name} (${defs.join(', ')})`);
    const indexed = rng.pick(table.columns.slice(1));
    out.push(`CREATE INDEX ${table.name}_${indexed.name}_idx ON ${table.name} (${indexed.name})`);
    const previousRows = t === 0 ? 10 : tables[t - 1]!.rowCount;
    const rows: string[] = [];
    for (let i = 1; i <= table.rowCount; i++) {
      const cells = table.columns.map((c) => {
        if (c.name === 'id') return String(i);
        if (c.name === 'ref') return rng.chance(0.1) ? 'NULL' : String(rng.int(1, previousRows + 3));
        return value(rng, c.kind);
      });
      rows.push(`(${cells.join(', ')})`);
    }
    out.push(`INSERT INTO ${table.name} VALUES ${rows.join(', ')}`);
  });
  return out;
}

/** A column reference with its kind, qualified by an alias when given. */
interface Ref {
  readonly sql: string;
  readonly kind: Kind;
}

const refsOf = (table: Table, alias: string | null): Ref[] => table.columns.map((c) => ({ sql: alias ? `${alias}.${c.name}` : c.name, kind: c.kind }));

const CMP = ['=', '<>', '<', '<=', '>', '>='];

function atom(rng: Rng, refs: readonly Ref[]): string {
  const r = rng.pick(refs);
  const choice = rng.int(0, 9);
  if (choice === 0) return `${r.sql} IS ${rng.pick(['', 'NOT '])}NULL`;
  if (r.kind === 'bool') return rng.pick([r.sql, `NOT ${r.sql}`, `${r.sql} = ${literal(rng, 'bool')}`, `${r.sql} IS NOT TRUE`]);
  if (choice === 1) {
    const [a, b] = [literal(rng, r.kind), literal(rng, r.kind)];
    return `${r.sql} ${rng.pick(['', 'NOT '])}BETWEEN ${a} AND ${b}`;
  }
  if (choice === 2) {
    const items = Array.from({ length: rng.int(1, 4) }, () => literal(rng, r.kind));
    if (rng.chance(0.25)) items.push('NULL');
    return `${r.sql} ${rng.pick(['', 'NOT '])}IN (${items.join(', ')})`;
  }
  if (choice === 3 && r.kind === 'text')
    return `${r.sql} ${rng.pick(['LIKE', 'NOT LIKE', 'ILIKE'])} ${quote(rng.pick(['a%', '%e%', '_', 'b\\_c', '%', 'Z%']))}`;
  if (choice === 4) {
    const same = refs.filter((o) => o.kind === r.kind && o.sql !== r.sql);
    if (same.length > 0) return `${r.sql} ${rng.pick(CMP)} ${rng.pick(same).sql}`;
  }
  if (choice === 5) return `${r.sql} IS ${rng.pick(['', 'NOT '])}DISTINCT FROM ${literal(rng, r.kind)}`;
  return `${r.sql} ${rng.pick(CMP)} ${literal(rng, r.kind)}`;
}

export function predicate(rng: Rng, refs: readonly Ref[], depth = 0): string {
  const roll = depth >= 2 ? 0 : rng.int(0, 5);
  if (roll <= 2) return atom(rng, refs);
  if (roll === 3) return `(${predicate(rng, refs, depth + 1)} AND ${predicate(rng, refs, depth + 1)})`;
  if (roll === 4) return `(${predicate(rng, refs, depth + 1)} OR ${predicate(rng, refs, depth + 1)})`;
  return `NOT (${predicate(rng, refs, depth + 1)})`;
}

/** A projected expression that cannot overflow or fail on any generated value. */
function projection(rng: Rng, refs: readonly Ref[]): string {
  const r = rng.pick(refs);
  if (rng.chance(0.6)) return r.sql;
  switch (r.kind) {
    case 'int':
      return rng.pick([`${r.sql} + 1`, `${r.sql} * 2`, `${r.sql} % 3`, `coalesce(${r.sql}, 0)`, `abs(${r.sql})`, `${r.sql} / 4`]);
    case 'bigint':
      return rng.pick([`${r.sql} / 2`, `coalesce(${r.sql}, -1)`, `${r.sql} > 0`]);
    case 'text':
      return rng.pick([`upper(${r.sql})`, `length(${r.sql})`, `${r.sql} || '!'`, `coalesce(${r.sql}, '?')`, `substr(${r.sql}, 2, 2)`]);
    case 'num':
      return rng.pick([`${r.sql} * 2`, `${r.sql} + 0.5`, `round(${r.sql})`, `-${r.sql}`, `${r.sql} / 3`]);
    case 'bool':
      return rng.pick([`NOT ${r.sql}`, `coalesce(${r.sql}, false)`, `CASE WHEN ${r.sql} THEN 'yes' ELSE 'no' END`]);
  }
}

function projections(rng: Rng, refs: readonly Ref[]): string[] {
  return Array.from({ length: rng.int(1, 4) }, (_, i) => `${projection(rng, refs)} AS p${i}`);
}

function orderKey(rng: Rng, refs: readonly Ref[]): string {
  const r = rng.pick(refs);
  return `${r.sql}${rng.pick(['', ' ASC', ' DESC'])}${rng.pick(['', '', ' NULLS FIRST', ' NULLS LAST'])}`;
}

const AGGREGATES: Record<Kind, readonly ((c: string) => string)[]> = {
  int: [(c) => `sum(${c})`, (c) => `min(${c})`, (c) => `max(${c})`, (c) => `avg(${c})`, (c) => `count(${c})`, (c) => `count(DISTINCT ${c})`],
  bigint: [(c) => `min(${c})`, (c) => `max(${c})`, (c) => `count(${c})`],
  text: [(c) => `min(${c})`, (c) => `max(${c})`, (c) => `count(DISTINCT ${c})`],
  num: [(c) => `sum(${c})`, (c) => `min(${c})`, (c) => `max(${c})`, (c) => `avg(${c})`],
  bool: [(c) => `bool_and(${c})`, (c) => `bool_or(${c})`, (c) => `count(${c})`],
};

function aggregates(rng: Rng, refs: readonly Ref[]): string[] {
  const out = ['count(*) AS n'];
  for (let i = 0; i < rng.int(1, 3); i++) {
    const r = rng.pick(refs);
    out.push(`${rng.pick(AGGREGATES[r.kind])(r.sql)} AS a${i}`);
  }
  return out;
}

function singleTableQuery(rng: Rng, table: Table): GeneratedQuery {
  const refs = refsOf(table, null);
  const shape = rng.int(0, 5);
  const where = rng.chance(0.85) ? ` WHERE ${predicate(rng, refs)}` : '';
  if (shape <= 1) return { sql: `SELECT id, ${projections(rng, refs).join(', ')} FROM ${table.name}${where}`, ordered: false };
  if (shape === 2) {
    const limit = rng.chance(0.7) ? ` LIMIT ${rng.int(1, 10)}` : '';
    const offset = rng.chance(0.3) ? ` OFFSET ${rng.int(1, 5)}` : '';
    return {
      sql: `SELECT id, ${projections(rng, refs).join(', ')} FROM ${table.name}${where} ORDER BY ${orderKey(rng, refs)}, id${limit}${offset}`,
      ordered: true,
    };
  }
  if (shape === 3) {
    const group = rng.pick(refs.filter((r) => r.sql !== 'id'));
    const having = rng.chance(0.3) ? ' HAVING count(*) > 1' : '';
    const ordered = rng.chance(0.5);
    const order = ordered ? ` ORDER BY ${group.sql} ${rng.pick(['ASC', 'DESC'])} NULLS FIRST` : '';
    return { sql: `SELECT ${group.sql}, ${aggregates(rng, refs).join(', ')} FROM ${table.name}${where} GROUP BY ${group.sql}${having}${order}`, ordered };
  }
  if (shape === 4) return { sql: `SELECT ${aggregates(rng, refs).join(', ')} FROM ${table.name}${where}`, ordered: false };
  const col = rng.pick(refs.filter((r) => r.sql !== 'id'));
  return { sql: `SELECT DISTINCT ${col.sql} FROM ${table.name}${where}`, ordered: false };
}

function joinQuery(rng: Rng, left: Table, right: Table): GeneratedQuery {
  const lrefs = refsOf(left, 'l');
  const rrefs = refsOf(right, 'r');
  const all = [...lrefs, ...rrefs];
  const join = rng.pick(['JOIN', 'JOIN', 'LEFT JOIN']);
  const from = `${left.name} l ${join} ${right.name} r ON r.ref = l.id`;
  const where = rng.chance(0.7) ? ` WHERE ${predicate(rng, all)}` : '';
  if (rng.chance(0.35)) {
    const group = rng.pick(lrefs.filter((r) => r.sql !== 'l.id'));
    return { sql: `SELECT ${group.sql}, ${aggregates(rng, rrefs).join(', ')} FROM ${from}${where} GROUP BY ${group.sql}`, ordered: false };
  }
  const cols = [...projections(rng, lrefs), ...projections(rng, rrefs).map((p) => p.replace(/ AS p(\d+)$/, ' AS q$1'))];
  if (rng.chance(0.5)) {
    const limit = rng.chance(0.6) ? ` LIMIT ${rng.int(1, 12)}` : '';
    return {
      sql: `SELECT l.id, r.id AS rid, ${cols.join(', ')} FROM ${from}${where} ORDER BY ${orderKey(rng, all)}, l.id, r.id NULLS FIRST${limit}`,
      ordered: true,
    };
  }
  return { sql: `SELECT l.id, r.id AS rid, ${cols.join(', ')} FROM ${from}${where}`, ordered: false };
}

function mutation(rng: Rng, table: Table): GeneratedQuery {
  const refs = refsOf(table, null);
  const where = predicate(rng, refs);
  if (rng.chance(0.4)) return { sql: `DELETE FROM ${table.name} WHERE ${where} RETURNING id`, ordered: false };
  const target = rng.pick(table.columns.filter((c) => c.name !== 'id'));
  return { sql: `UPDATE ${table.name} SET ${target.name} = ${value(rng, target.kind)} WHERE ${where} RETURNING id, ${target.name}`, ordered: false };
}

/** One case: schema, data, `queryCount` queries and a few mutations (each followed by a read-back). */
export function generateCase(seed: number, queryCount: number): DifferentialCase {
  const rng = new Rng(seed);
  const tables = makeTables(rng, `d${seed}`);
  const setup = setupStatements(rng, tables);
  const queries: GeneratedQuery[] = [];
  for (let i = 0; i < queryCount; i++) {
    const t = rng.int(0, tables.length - 1);
    queries.push(t > 0 && rng.chance(0.4) ? joinQuery(rng, tables[t - 1]!, tables[t]!) : singleTableQuery(rng, tables[t]!));
  }
  const mutations: GeneratedQuery[] = [];
  for (let i = 0; i < 3; i++) {
    const table = rng.pick(tables);
    mutations.push(mutation(rng, table));
    mutations.push({ sql: `SELECT * FROM ${table.name} ORDER BY id`, ordered: true });
  }
  return { seed, setup, queries, mutations };
}
