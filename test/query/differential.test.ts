import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from './helpers.js';
import { normalize, openPg, pgRows, sortRows } from './pg-oracle.js';

/** Deterministic PRNG (mulberry32) so a failure can be replayed by its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type ColType = 'INTEGER' | 'BIGINT' | 'TEXT' | 'NUMERIC(10,2)' | 'BOOLEAN' | 'DOUBLE PRECISION' | 'SMALLINT' | 'VARCHAR(8)';
interface Col {
  name: string;
  type: ColType;
}
interface Table {
  name: string;
  cols: Col[];
}

class Gen {
  constructor(readonly r: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.r() * (hi - lo + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
}

const TYPES: ColType[] = ['INTEGER', 'BIGINT', 'TEXT', 'NUMERIC(10,2)', 'BOOLEAN', 'DOUBLE PRECISION', 'SMALLINT', 'VARCHAR(8)'];
const numeric = (t: ColType): boolean => t !== 'TEXT' && t !== 'BOOLEAN' && t !== 'VARCHAR(8)';
const integral = (t: ColType): boolean => t === 'INTEGER' || t === 'BIGINT' || t === 'SMALLINT';

function literal(g: Gen, t: ColType): string {
  if (g.chance(0.1)) return 'NULL';
  switch (t) {
    case 'INTEGER':
    case 'BIGINT':
    case 'SMALLINT':
      return String(g.int(-5, 20));
    case 'NUMERIC(10,2)':
      return (g.int(-500, 2000) / 100).toFixed(2);
    case 'DOUBLE PRECISION':
      return String(g.int(-40, 80) / 4);
    case 'BOOLEAN':
      return g.pick(['true', 'false']);
    case 'TEXT':
    case 'VARCHAR(8)':
      return `'${g.pick(['a', 'b', 'ab', 'abc', 'B', 'z', '', 'a b'])}'`;
  }
}

function schema(g: Gen): Table[] {
  return ['ta', 'tb'].map((name) => {
    const cols: Col[] = [
      { name: 'id', type: 'INTEGER' },
      { name: 'k', type: 'INTEGER' },
    ];
    const n = g.int(2, 4);
    for (let i = 0; i < n; i++) cols.push({ name: `c${i}`, type: g.pick(TYPES) });
    return { name, cols };
  });
}

function ddl(t: Table): string {
  return `CREATE TABLE ${t.name} (${t.cols.map((c) => `${c.name} ${c.type}${c.name === 'id' ? ' PRIMARY KEY' : ''}`).join(', ')})`;
}

function rows(g: Gen, t: Table, count: number): string {
  const values = Array.from(
    { length: count },
    (_v, i) =>
      `(${t.cols.map((c) => (c.name === 'id' ? String(i + 1) : c.name === 'k' ? (g.chance(0.1) ? 'NULL' : String(g.int(0, 6))) : literal(g, c.type))).join(', ')})`,
  );
  return `INSERT INTO ${t.name} VALUES ${values.join(', ')}`;
}

function predicate(g: Gen, alias: string, cols: Col[], depth = 0): string {
  const c = g.pick(cols);
  const ref = `${alias}.${c.name}`;
  if (depth < 2 && g.chance(0.3)) {
    const op = g.pick(['AND', 'OR']);
    return `(${predicate(g, alias, cols, depth + 1)} ${op} ${predicate(g, alias, cols, depth + 1)})`;
  }
  if (depth < 2 && g.chance(0.1)) return `NOT (${predicate(g, alias, cols, depth + 1)})`;
  switch (g.int(0, 6)) {
    case 0:
      return `${ref} IS ${g.pick(['', 'NOT '])}NULL`;
    case 1:
      return `${ref} IN (${[literal(g, c.type), literal(g, c.type), literal(g, c.type)].join(', ')})`;
    case 2:
      return `${ref} NOT IN (${[literal(g, c.type), literal(g, c.type)].join(', ')})`;
    case 3:
      return c.type === 'BOOLEAN' ? ref : `${ref} BETWEEN ${literal(g, c.type)} AND ${literal(g, c.type)}`;
    case 4:
      return `${ref} IS DISTINCT FROM ${literal(g, c.type)}`;
    default:
      return `${ref} ${g.pick(['=', '<>', '<', '<=', '>', '>='])} ${literal(g, c.type)}`;
  }
}

function expression(g: Gen, alias: string, cols: Col[]): string {
  const c = g.pick(cols);
  const ref = `${alias}.${c.name}`;
  if (numeric(c.type)) {
    const other = g.pick(cols.filter((x) => integral(x.type)));
    return g.pick([
      `${ref} + ${alias}.${other.name}`,
      `${ref} * 2`,
      `${ref} - 1`,
      `abs(${ref})`,
      `COALESCE(${ref}, 0)`,
      `CASE WHEN ${ref} > 3 THEN 1 ELSE 0 END`,
    ]);
  }
  if (c.type === 'BOOLEAN') return g.pick([`NOT ${ref}`, `${ref} IS TRUE`, `COALESCE(${ref}, false)`]);
  return g.pick([`upper(${ref})`, `${ref} || 'x'`, `length(${ref})`, `COALESCE(${ref}, '-')`, `${ref} LIKE 'a%'`]);
}

/** Indexes so that range predicates go through index and primary-key scans (ASC and DESC). */
function indexes(g: Gen, t: Table): string[] {
  const candidates = t.cols.filter((c) => c.name !== 'id');
  return [0, 1].map((i) => {
    const c = g.pick(candidates);
    const second = g.chance(0.4) ? `, ${g.pick(candidates).name}${g.chance(0.5) ? ' DESC' : ''}` : '';
    return `CREATE INDEX ${t.name}_i${i} ON ${t.name} (${c.name}${g.chance(0.5) ? ' DESC' : ''}${second === `, ${c.name}` ? '' : second})`;
  });
}

/** A random UPDATE or DELETE (compared by the table contents afterwards). */
function dml(g: Gen, tables: Table[]): string {
  const t = g.pick(tables);
  const c = g.pick(t.cols.filter((x) => x.name !== 'id'));
  if (g.chance(0.5)) return `UPDATE ${t.name} a SET ${c.name} = ${literal(g, c.type)} WHERE ${predicate(g, 'a', t.cols)}`;
  return `DELETE FROM ${t.name} a WHERE ${predicate(g, 'a', t.cols)}`;
}

function query(g: Gen, tables: Table[]): string {
  const [a, b] = tables as [Table, Table];
  switch (g.int(0, 7)) {
    case 0: {
      const items = [expression(g, 'a', a.cols), expression(g, 'a', a.cols), 'a.id'];
      return `SELECT ${items.join(', ')} FROM ${a.name} a WHERE ${predicate(g, 'a', a.cols)}`;
    }
    case 1: {
      const c = g.pick(a.cols.filter((x) => x.name !== 'id'));
      const agg = g.pick(a.cols.filter((x) => integral(x.type) || x.type === 'NUMERIC(10,2)'));
      return `SELECT a.${c.name}, count(*), count(a.${agg.name}), sum(a.${agg.name}), min(a.${agg.name}), max(a.${agg.name}) FROM ${a.name} a GROUP BY a.${c.name}`;
    }
    case 2:
      return `SELECT a.id, b.id FROM ${a.name} a ${g.pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN'])} ${b.name} b ON a.k = b.k WHERE ${g.chance(0.5) ? predicate(g, 'a', a.cols) : 'true'}`;
    case 3:
      return `SELECT a.id FROM ${a.name} a WHERE a.k ${g.pick(['IN', 'NOT IN'])} (SELECT b.k FROM ${b.name} b WHERE ${predicate(g, 'b', b.cols)})`;
    case 4:
      return `SELECT a.id FROM ${a.name} a WHERE ${g.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM ${b.name} b WHERE b.k = a.k AND ${predicate(g, 'b', b.cols)})`;
    case 5:
      return `SELECT DISTINCT a.k FROM ${a.name} a WHERE ${predicate(g, 'a', a.cols)}`;
    case 6:
      return `SELECT a.k FROM ${a.name} a ${g.pick(['UNION', 'UNION ALL', 'INTERSECT', 'EXCEPT'])} SELECT b.k FROM ${b.name} b`;
    default: {
      const c = g.pick(a.cols);
      return `SELECT a.id, a.${c.name} FROM ${a.name} a ORDER BY a.${c.name} ${g.pick(['ASC', 'DESC'])} ${g.pick(['', 'NULLS FIRST', 'NULLS LAST'])}, a.id LIMIT ${g.int(1, 10)}`;
    }
  }
}

async function outcome(run: () => Promise<unknown[][]>): Promise<{ rows?: unknown[][]; error?: string }> {
  try {
    return { rows: await run() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
const QUERIES_PER_SEED = 60;

describe('differential: generated schemas, data and queries against PostgreSQL (PGlite)', () => {
  let pg: PGlite;
  beforeAll(async () => {
    pg = await openPg();
  });
  afterAll(async () => {
    await pg.close();
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}`, async () => {
      const g = new Gen(rng(seed));
      const tables = schema(g);
      const h: SqlHarness = await openSql();
      try {
        await pg.query('DROP TABLE IF EXISTS ta, tb');
        for (const t of tables) {
          const stmts = [ddl(t), ...indexes(g, t), rows(g, t, 25)];
          for (const s of stmts) {
            await pg.query(s);
            await h.q(s);
          }
        }
        const mismatches: string[] = [];
        for (let i = 0; i < QUERIES_PER_SEED; i++) {
          const change = i % 10 === 9 ? dml(g, tables) : null;
          if (change) {
            const applied = await outcome(async () => [[(await h.q(change)).affectedRows]]);
            const expected = await outcome(async () => [[(await pg.query(change)).affectedRows ?? 0]]);
            if (JSON.stringify(applied) !== JSON.stringify(expected))
              mismatches.push(`${change}\n  svcdb: ${JSON.stringify(applied)}\n  pg: ${JSON.stringify(expected)}`);
          }
          const sql = change ? `SELECT * FROM ${g.pick(tables).name} a ORDER BY a.id` : query(g, tables);
          const ordered = /ORDER BY/.test(sql);
          const mine = await outcome(async () => {
            const r = await h.q(sql);
            return r.rows.map((row) => r.columns.map((c) => normalize(row[c.name])));
          });
          const theirs = await outcome(() => pgRows(pg, sql));
          if (mine.error !== undefined || theirs.error !== undefined) {
            if ((mine.error === undefined) !== (theirs.error === undefined))
              mismatches.push(`${sql}\n  svcdb: ${mine.error ?? 'ok'}\n  pg: ${theirs.error ?? 'ok'}`);
            continue;
          }
          const a = JSON.stringify(ordered ? mine.rows : sortRows(mine.rows!));
          const b = JSON.stringify(ordered ? theirs.rows : sortRows(theirs.rows!));
          if (a !== b) mismatches.push(`${sql}\n  svcdb: ${a}\n  pg:    ${b}`);
        }
        expect(mismatches, `schema: ${tables.map(ddl).join('; ')}\n${mismatches.join('\n')}`).toEqual([]);
      } finally {
        await h.close();
      }
    });
  }
});
