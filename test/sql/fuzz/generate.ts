import { anyExpr, boolExpr, Features, numExpr, refsOf, textExpr, type Ref } from './expressions.js';
import { dateTimeQuery, dmlStatement, invalidStatement, jsonbQuery, arrayQuery, paramQuery } from './generate-more.js';
import { Rand } from './random.js';
import { CATEGORIES, type Category, type Draft, type FuzzStatement } from './statement.js';
import { DEPT, EMP, EVENTS } from './schema.js';

export { CATEGORIES, type Category, type FuzzStatement } from './statement.js';

const q = (sql: string, ordered = false): Draft => ({ sql, params: [], ordered, changesData: false });

/** Select-list items (2..3) with aliases c1.. so every output column has a stable name. */
function selectList(r: Rand, refs: readonly Ref[], f: Features, count = r.int(1, 3)): string {
  return Array.from({ length: count }, (_v, i) => `${anyExpr(r, refs, f).sql} AS c${i + 1}`).join(', ');
}

/** ORDER BY every output position (so the order is total), with random directions and NULLS placement. */
export function orderAll(r: Rand, columns: number, f: Features): string {
  const keys = Array.from({ length: columns }, (_v, i) => {
    const nulls = r.chance(0.3) ? ` NULLS ${r.pick(['FIRST', 'LAST'])}` : '';
    if (nulls) f.add('order.nulls');
    return `${i + 1}${r.pick(['', ' ASC', ' DESC'])}${nulls}`;
  });
  return ` ORDER BY ${keys.join(', ')}`;
}

function where(r: Rand, f: Features): Draft {
  const refs = refsOf(EMP, 'e');
  return q(`SELECT e.id, ${selectList(r, refs, f, 1)} FROM emp e WHERE ${boolExpr(r, refs, f)}`);
}

function expr(r: Rand, f: Features): Draft {
  const t = r.pick([EMP, EVENTS]);
  const refs = refsOf(t, null);
  if (r.chance(0.2)) return q(`SELECT ${selectList(r, [], f)}`);
  return q(`SELECT id, ${Array.from({ length: r.int(1, 3) }, (_v, i) => `${numExpr(r, refs, f)} AS n${i}`).join(', ')} FROM ${t.name}`);
}

function string(r: Rand, f: Features): Draft {
  const refs = refsOf(r.pick([EMP, EVENTS, DEPT]), null);
  const extra = r.pick([
    "length(COALESCE(name, kind, ''))",
    "position('a' IN COALESCE(name, ''))",
    "initcap('hello wORLD')",
    "reverse('abc')",
    "repeat('ab', 2)",
    "strpos('hello', 'l')",
    "'a' || NULL",
    "format('%s-%s', 'x', 1)",
    "regexp_replace('abc123', '[0-9]+', '#')",
    "md5('x')",
    "chr(65) || ascii('a')",
    "starts_with('hello', 'he')",
  ]);
  f.add('string');
  const tableName = refs.some((x) => x.sql === 'kind') ? 'events' : refs.some((x) => x.sql === 'dept_id') ? 'emp' : 'dept';
  const safeExtra = tableName === 'events' ? extra.replace('name, ', '') : extra.replace('kind, ', '');
  return q(`SELECT id, ${textExpr(r, refs, f)} AS s, ${safeExtra} AS x FROM ${tableName}`);
}

function orderLimit(r: Rand, f: Features): Draft {
  const refs = refsOf(EMP, null);
  const n = r.int(1, 3);
  const items = Array.from({ length: n }, (_v, i) => `${anyExpr(r, refs, f).sql} AS c${i + 1}`).join(', ');
  let sql = `SELECT id, ${items} FROM emp`;
  if (r.chance(0.4)) {
    f.add('order.expression');
    sql += ` ORDER BY ${numExpr(r, refs, f)} + 0 ${r.pick(['ASC', 'DESC'])} NULLS ${r.pick(['FIRST', 'LAST'])}, id`;
  } else sql += orderAll(r, n + 1, f);
  if (r.chance(0.6)) {
    const lim = r.chance(0.3) ? (f.add('limit.expression'), `(${r.int(1, 3)} + ${r.int(0, 3)})`) : String(r.int(0, 6));
    sql += ` LIMIT ${lim}`;
  }
  if (r.chance(0.4)) sql += ` OFFSET ${r.chance(0.3) ? (f.add('limit.expression'), `${r.int(1, 2)} * 2`) : String(r.int(0, 5))}`;
  return q(sql, true);
}

function distinct(r: Rand, f: Features): Draft {
  const refs = refsOf(EMP, null);
  if (r.chance(0.4)) {
    f.add('distinct.on');
    return q(
      `SELECT DISTINCT ON (dept_id) dept_id, id, name FROM emp ORDER BY dept_id ${r.pick(['ASC', 'DESC'])} NULLS ${r.pick(['FIRST', 'LAST'])}, id ${r.pick(['ASC', 'DESC'])}`,
      true,
    );
  }
  return q(`SELECT DISTINCT ${selectList(r, refs, f, r.int(1, 2))} FROM emp`);
}

const AGGS = [
  'count(*)',
  'count(@)',
  'sum(@)',
  'avg(@)',
  'min(@)',
  'max(@)',
  'count(DISTINCT @)',
  'bool_and(active)',
  'bool_or(active)',
  "string_agg(name, ',' ORDER BY name)",
  'array_agg(id ORDER BY id)',
  'sum(@) FILTER (WHERE active)',
  'stddev_samp(@)',
  'every(active)',
];

function aggregate(r: Rand, f: Features): Draft {
  const refs = refsOf(EMP, null);
  const aggs = r.some(AGGS, 3).map((a, i) => `${a.replace('@', r.pick(['salary', 'bonus', 'id', 'dept_id']))} AS a${i}`);
  aggs.forEach((a) => f.add(`aggregate.${a.split('(')[0]}`));
  if (r.chance(0.25)) return q(`SELECT ${aggs.join(', ')} FROM emp WHERE ${boolExpr(r, refs, f)}`);
  const key = r.pick(['dept_id', 'active', '(dept_id IS NULL)', 'dept_id % 2', "date_trunc('quarter', hired)"]);
  if (key.startsWith('(')) f.add('group.paren-expression');
  const having = r.chance(0.4) ? ` HAVING ${r.pick(['count(*) > 1', 'sum(salary) > 5000', 'max(id) < 10', 'count(DISTINCT name) >= 2'])}` : '';
  if (having) f.add('group.having');
  return q(`SELECT ${key} AS k, ${aggs.join(', ')} FROM emp GROUP BY ${r.chance(0.5) ? '1' : key}${having}`);
}

function join(r: Rand, f: Features): Draft {
  const kind = r.pick(['JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN', 'CROSS JOIN', 'NATURAL JOIN', 'USING', 'LEFT JOIN LATERAL']);
  f.add(`join.${kind.toLowerCase().replaceAll(' ', '-')}`);
  const refs = [...refsOf(EMP, 'e'), ...refsOf(DEPT, 'd')];
  const cols = `e.id AS eid, d.id AS did, ${anyExpr(r, refs, f).sql} AS x`;
  const filter = r.chance(0.4) ? ` WHERE ${boolExpr(r, refs, f)}` : '';
  if (kind === 'CROSS JOIN') return q(`SELECT ${cols} FROM emp e CROSS JOIN dept d${filter}`);
  if (kind === 'NATURAL JOIN')
    return q(`SELECT * FROM (SELECT id, name FROM emp) e NATURAL ${r.pick(['', 'LEFT '])}JOIN (SELECT id, name AS dname FROM dept) d`);
  if (kind === 'USING') return q(`SELECT id, e.name, d.name FROM emp e JOIN (SELECT id, name FROM dept) d USING (id)`);
  if (kind === 'LEFT JOIN LATERAL')
    return q(`SELECT d.id, x.n FROM dept d LEFT JOIN LATERAL (SELECT count(*) AS n FROM emp e WHERE e.dept_id = d.id) x ON true`);
  const on = r.chance(0.7) ? 'e.dept_id = d.id' : `e.dept_id = d.id AND ${boolExpr(r, refs, f)}`;
  const third = r.chance(0.3) ? ` ${r.pick(['JOIN', 'LEFT JOIN'])} events v ON v.emp_id = e.id` : '';
  if (third) f.add('join.three-way');
  return q(`SELECT ${cols}${third ? ', v.id AS vid' : ''} FROM emp e ${kind} dept d ON ${on}${third}${filter}`);
}

function subquery(r: Rand, f: Features): Draft {
  const refs = refsOf(EMP, 'e');
  switch (r.int(0, 7)) {
    case 0:
      f.add('subquery.in');
      return q(
        `SELECT id FROM emp e WHERE e.dept_id ${r.pick(['IN', 'NOT IN'])} (SELECT ${r.pick(['id', 'parent_id'])} FROM dept WHERE ${r.pick(['budget > 1000', 'id < 4', 'true'])})`,
      );
    case 1:
      f.add('subquery.exists-correlated');
      return q(
        `SELECT id, name FROM emp e WHERE ${r.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM events v WHERE v.emp_id = e.id AND ${r.pick(["v.kind = 'sale'", 'v.amount > 0', 'v.at IS NOT NULL'])})`,
      );
    case 2:
      f.add('subquery.scalar-correlated');
      return q(`SELECT id, (SELECT max(v.amount) FROM events v WHERE v.emp_id = e.id) AS m FROM emp e`);
    case 3:
      f.add('subquery.any-all');
      return q(
        `SELECT id FROM emp e WHERE e.salary ${r.pick(['>', '<', '='])} ${r.pick(['ANY', 'ALL', 'SOME'])} (SELECT budget / 100 FROM dept WHERE budget IS NOT NULL)`,
      );
    case 4:
      f.add('subquery.derived');
      return q(`SELECT s.k, s.n FROM (SELECT dept_id AS k, count(*) AS n FROM emp GROUP BY dept_id) s WHERE s.n > ${r.int(0, 2)}`);
    case 5:
      f.add('subquery.scalar');
      return q(`SELECT id, ${numExpr(r, refs, f)} - (SELECT min(id) FROM dept) AS x FROM emp e`);
    case 6:
      f.add('subquery.correlated-in-select-where');
      return q(
        `SELECT d.id FROM dept d WHERE (SELECT count(*) FROM emp e WHERE e.dept_id = d.id AND ${boolExpr(r, refs, f)}) ${r.pick(['>', '=', '<'])} ${r.int(0, 2)}`,
      );
    default:
      f.add('subquery.row-compare');
      return q(`SELECT id FROM emp e WHERE (e.dept_id, e.active) IN (SELECT id, true FROM dept)`);
  }
}

function cte(r: Rand, f: Features): Draft {
  if (r.chance(0.5)) {
    f.add('cte.recursive');
    return r.pick([
      q(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${r.int(2, 8)}) SELECT ${r.pick(['i', 'sum(i)', 'count(*)'])} FROM n${r.chance(0.5) ? ' GROUP BY i' : ''}`,
      ),
      q(
        `WITH RECURSIVE tree(id, depth) AS (SELECT id, 0 FROM dept WHERE parent_id IS NULL UNION ALL SELECT d.id, t.depth + 1 FROM dept d JOIN tree t ON d.parent_id = t.id) SELECT id, depth FROM tree`,
      ),
      q(
        `WITH RECURSIVE tree AS (SELECT id, name::text AS path FROM dept WHERE parent_id IS NULL UNION ALL SELECT d.id, t.path || '/' || d.name FROM dept d, tree t WHERE d.parent_id = t.id) SELECT * FROM tree`,
      ),
      q(`WITH RECURSIVE fib(a, b) AS (SELECT 0::bigint, 1::bigint UNION ALL SELECT b, a + b FROM fib WHERE b < 100) SELECT a FROM fib`),
    ]);
  }
  f.add('cte.plain');
  const refs = refsOf(EMP, null);
  return q(
    `WITH x AS ${r.pick(['', '', '', 'MATERIALIZED ', 'NOT MATERIALIZED '])}(SELECT id, dept_id, ${numExpr(r, refs, f)} AS v FROM emp WHERE ${boolExpr(r, refs, f)}), y AS (SELECT dept_id, count(*) AS n FROM x GROUP BY dept_id) SELECT x.id, y.n FROM x JOIN y ON x.dept_id = y.dept_id`,
  );
}

function setop(r: Rand, f: Features): Draft {
  const op = r.pick(['UNION', 'UNION ALL', 'INTERSECT', 'INTERSECT ALL', 'EXCEPT', 'EXCEPT ALL']);
  f.add(`setop.${op.toLowerCase().replace(' ', '-')}`);
  const sideA = r.pick(['SELECT dept_id FROM emp', 'SELECT id FROM dept', 'SELECT emp_id FROM events', 'SELECT amount % 3 FROM events']);
  const sideB = r.pick(['SELECT dept_id FROM emp WHERE active', 'SELECT parent_id FROM dept', 'SELECT id FROM emp WHERE id < 6', 'SELECT 1']);
  if (r.chance(0.3)) {
    f.add('setop.order-limit');
    return q(`${sideA} ${op} ${sideB} ORDER BY 1 NULLS FIRST LIMIT ${r.int(1, 5)}`, true);
  }
  if (r.chance(0.2)) {
    f.add('setop.parenthesized');
    return q(`(${sideA}) ${op} ((${sideB}) ${r.pick(['UNION', 'INTERSECT', 'EXCEPT'])} SELECT 2)`);
  }
  return q(`${sideA} ${op} ${sideB}`);
}

const FRAMES = [
  '',
  'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW',
  'ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING',
  'ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING',
  'RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW',
  'RANGE BETWEEN 1000 PRECEDING AND 1000 FOLLOWING',
  'GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW',
  'ROWS 2 PRECEDING',
  'ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING EXCLUDE CURRENT ROW',
];

function windowQuery(r: Rand, f: Features): Draft {
  const fn = r.pick([
    'row_number()',
    'rank()',
    'dense_rank()',
    'sum(salary)',
    'count(*)',
    'avg(bonus)',
    'min(id)',
    'lag(id)',
    'lead(id, 2, -1)',
    'first_value(name)',
    'last_value(id)',
    'ntile(3)',
    'percent_rank()',
    'cume_dist()',
    'nth_value(id, 2)',
    'max(salary)',
  ]);
  f.add(`window.${fn.split('(')[0]}`);
  const part = r.pick(['', 'PARTITION BY dept_id ', 'PARTITION BY (dept_id IS NULL) ', 'PARTITION BY active ']);
  if (part.includes('(')) f.add('window.partition-expression');
  const frame = ['rank()', 'dense_rank()', 'row_number()', 'ntile(3)', 'percent_rank()', 'cume_dist()', 'lag(id)', 'lead(id, 2, -1)'].includes(fn)
    ? ''
    : r.pick(FRAMES);
  if (frame) f.add(`window.frame.${frame.split(' ')[0]!.toLowerCase()}${frame.includes('EXCLUDE') ? '-exclude' : ''}`);
  // A RANGE offset frame takes one key; salary's only ties are its NULLs (emp 5 and 10), whose order PostgreSQL
  // leaves unspecified, so a function picking a row of the frame orders by a key without ties (NULL -> the id).
  const picksRow = /^(first_value|last_value|nth_value)/.test(fn);
  const rangeKey = picksRow ? 'coalesce(salary, id)' : 'salary';
  const orderKey = frame.startsWith('RANGE BETWEEN 1000') ? rangeKey : r.pick(['id', 'salary, id', 'hired NULLS FIRST, id', 'id DESC']);
  const named = r.chance(0.15);
  if (named) f.add('window.named');
  const spec = `${part}ORDER BY ${orderKey}${frame ? ` ${frame}` : ''}`;
  return named ? q(`SELECT id, ${fn} OVER w AS w1 FROM emp WINDOW w AS (${spec})`) : q(`SELECT id, ${fn} OVER (${spec}) AS w1 FROM emp`);
}

const GENERATORS: Record<Category, (r: Rand, f: Features) => Draft> = {
  where,
  expr,
  string,
  order_limit: orderLimit,
  distinct,
  aggregate,
  join,
  subquery,
  cte,
  setop,
  window: windowQuery,
  jsonb: jsonbQuery,
  datetime: dateTimeQuery,
  array: arrayQuery,
  param: paramQuery,
  dml: dmlStatement,
  invalid: invalidStatement,
};

/** Statement `index` of the run seeded `seed`: the category cycles, the rest is random. */
export function generateStatement(seed: number, index: number): FuzzStatement {
  const r = new Rand(seed * 100_003 + index * 7919 + 1);
  const category = CATEGORIES[(index + seed) % CATEGORIES.length]!;
  const f = new Features();
  const draft = GENERATORS[category](r, f);
  return { ...draft, category, features: [...f.tags, ...(draft.features ?? [])] };
}

/** `count` statements of the run seeded `seed`. */
export function generateStatements(seed: number, count: number): FuzzStatement[] {
  return Array.from({ length: count }, (_v, i) => generateStatement(seed, i));
}
