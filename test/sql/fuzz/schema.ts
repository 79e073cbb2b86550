/**
 * The fuzzer's fixed schema and data: the same DDL and rows on PostgreSQL (PGlite) and svcdb.
 * Small tables (a few dozen rows) with NULLs in every nullable column, so three-valued logic,
 * NULLS FIRST/LAST and outer joins are exercised; values are exact in binary floating point
 * where PostgreSQL and JavaScript could print them differently.
 */

export interface FuzzColumn {
  readonly name: string;
  /** The generator's view of the type: what expressions it may build on the column. */
  readonly kind: 'int' | 'text' | 'numeric' | 'float' | 'bool' | 'timestamptz' | 'timestamp' | 'date' | 'jsonb';
}

export interface FuzzTable {
  readonly name: string;
  readonly columns: readonly FuzzColumn[];
}

const col = (name: string, kind: FuzzColumn['kind']): FuzzColumn => ({ name, kind });

export const TABLES: readonly FuzzTable[] = [
  {
    name: 'emp',
    columns: [
      col('id', 'int'),
      col('dept_id', 'int'),
      col('name', 'text'),
      col('salary', 'numeric'),
      col('bonus', 'float'),
      col('active', 'bool'),
      col('hired', 'timestamptz'),
      col('birth', 'date'),
      col('meta', 'jsonb'),
    ],
  },
  { name: 'dept', columns: [col('id', 'int'), col('name', 'text'), col('budget', 'numeric'), col('parent_id', 'int')] },
  {
    name: 'events',
    columns: [col('id', 'int'), col('emp_id', 'int'), col('kind', 'text'), col('at', 'timestamp'), col('amount', 'int'), col('payload', 'jsonb')],
  },
];

export const TABLE_DDL: readonly string[] = [
  'CREATE TABLE dept (id INTEGER PRIMARY KEY, name TEXT NOT NULL, budget NUMERIC(12,2), parent_id INTEGER)',
  'CREATE TABLE emp (id INTEGER PRIMARY KEY, dept_id INTEGER, name TEXT, salary NUMERIC(10,2), bonus DOUBLE PRECISION, active BOOLEAN DEFAULT true, hired TIMESTAMPTZ, birth DATE, meta JSONB)',
  'CREATE TABLE events (id BIGINT PRIMARY KEY, emp_id INTEGER, kind TEXT, at TIMESTAMP, amount INTEGER DEFAULT 0, payload JSONB)',
  // Array columns (TEXT[], INTEGER[]): the array category's statements read them.
  'CREATE TABLE tags (id INTEGER PRIMARY KEY, labels TEXT[], scores INTEGER[])',
];

const DEPT_ROWS = ["(1, 'eng', 1000000.00, NULL)", "(2, 'ops', 250000.50, 1)", "(3, 'sales', NULL, 1)", "(4, 'legal', 90000.00, 3)", "(5, 'empty', 0.00, 4)"];

const NAMES = ['ann', 'bob', 'Cy', 'dee', 'eve', 'fay', 'gus', 'hal', 'ivy', 'jo', 'kim', 'lu'];
const JSON_DOCS = [
  `'{"a": 1, "tags": ["x", "y"], "lvl": {"n": 2}}'`,
  `'{"a": 2, "tags": [], "flag": true}'`,
  `'{"b": "s", "a": null}'`,
  `'[1, 2, 3]'`,
  `'{"a": 10, "lvl": {"n": 5, "m": "q"}}'`,
  'NULL',
];

function empRow(i: number): string {
  const id = i + 1;
  const dept = i % 6 === 5 ? 'NULL' : String((i % 4) + 1);
  const name = i === 7 ? 'NULL' : `'${NAMES[i]}'`;
  const salary = i % 5 === 4 ? 'NULL' : (((i * 3517) % 9000) + 1000 + (i % 4) * 0.25).toFixed(2);
  const bonus = i % 4 === 3 ? 'NULL' : String((i % 7) * 0.5 - 1);
  const active = i % 6 === 2 ? 'NULL' : i % 3 === 0 ? 'true' : 'false';
  const hired =
    i % 7 === 6
      ? 'NULL'
      : `'2023-${String((i % 12) + 1).padStart(2, '0')}-${String(((i * 5) % 28) + 1).padStart(2, '0')} ${String((i * 7) % 24).padStart(2, '0')}:${String((i * 13) % 60).padStart(2, '0')}:00+00'`;
  const birth = i % 5 === 1 ? 'NULL' : `'19${70 + i * 2}-0${(i % 9) + 1}-1${i % 10}'`;
  return `(${id}, ${dept}, ${name}, ${salary}, ${bonus}, ${active}, ${hired}, ${birth}, ${JSON_DOCS[i % JSON_DOCS.length]})`;
}

function eventRow(i: number): string {
  const id = i + 1;
  const emp = i % 8 === 7 ? 'NULL' : String(((i * 5) % 13) + 1); // 13 does not exist in emp: unmatched rows
  const kind = i % 9 === 8 ? 'NULL' : `'${['login', 'sale', 'refund', 'Login'][i % 4]}'`;
  const at = i % 10 === 9 ? 'NULL' : `'2024-0${(i % 3) + 1}-${String(((i * 3) % 27) + 1).padStart(2, '0')} ${String((i * 5) % 24).padStart(2, '0')}:30:00'`;
  const amount = i % 6 === 4 ? 'NULL' : String(((i * 37) % 200) - 50);
  const payload = i % 5 === 3 ? 'NULL' : `'{"n": ${i % 4}, "src": "${['web', 'app'][i % 2]}"}'`;
  return `(${id}, ${emp}, ${kind}, ${at}, ${amount}, ${payload})`;
}

/** INSERT statements that (re)load the base data into emptied tables. */
export const DATA_SQL: readonly string[] = [
  `INSERT INTO dept VALUES ${DEPT_ROWS.join(', ')}`,
  `INSERT INTO emp VALUES ${NAMES.map((_n, i) => empRow(i)).join(', ')}`,
  `INSERT INTO events VALUES ${Array.from({ length: 18 }, (_v, i) => eventRow(i)).join(', ')}`,
  `INSERT INTO tags VALUES (1, ARRAY['a', 'b'], ARRAY[1, 2, 3]), (2, '{}', NULL), (3, ARRAY['b', NULL], ARRAY[5])`,
];

/** The tables DML statements change; the runner reloads them after each data-changing statement. */
export const MUTABLE_TABLES: readonly string[] = ['dept', 'emp', 'events'];

const table = (name: string): FuzzTable => TABLES.find((t) => t.name === name)!;
export const EMP = table('emp');
export const DEPT = table('dept');
export const EVENTS = table('events');
