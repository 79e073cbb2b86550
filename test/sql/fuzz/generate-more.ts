import { boolExpr, literal, numExpr, refsOf, textExpr, type Features } from './expressions.js';
import type { Draft } from './statement.js';
import type { Rand } from './random.js';
import { EMP, EVENTS } from './schema.js';

/** The generators of jsonb, date/time, array, parameter, DML and invalid statements. */

const q = (sql: string, ordered = false): Draft => ({ sql, params: [], ordered, changesData: false });

export function jsonbQuery(r: Rand, f: Features): Draft {
  const col = r.pick(['meta', 'payload']);
  const from = col === 'meta' ? 'emp' : 'events';
  const exprs = [
    [`${col} -> 'a'`, 'jsonb.arrow'],
    [`${col} ->> 'src'`, 'jsonb.arrow-text'],
    [`${col} #> '{lvl,n}'`, 'jsonb.path'],
    [`${col} #>> '{lvl,m}'`, 'jsonb.path-text'],
    [`${col} -> 'tags' -> 0`, 'jsonb.index'],
    [`${col} ? 'a'`, 'jsonb.exists'],
    [`${col} ?| ARRAY['a', 'n']`, 'jsonb.exists-any'],
    [`${col} @> '{"a": 1}'`, 'jsonb.contains'],
    [`'{"a": 1}'::jsonb <@ ${col}`, 'jsonb.contained'],
    [`jsonb_typeof(${col})`, 'jsonb.typeof'],
    [`jsonb_array_length(CASE WHEN jsonb_typeof(${col}) = 'array' THEN ${col} END)`, 'jsonb.array-length'],
    [`${col} || '{"z": 0}'::jsonb`, 'jsonb.concat'],
    [`${col} - 'a'`, 'jsonb.delete-key'],
    [`(${col} ->> 'n')::int + 1`, 'jsonb.cast-text'],
    [`jsonb_build_object('k', id, 'v', ${col} -> 'a')`, 'jsonb.build-object'],
    [`${col} IS NULL`, 'jsonb.is-null'],
    [`'null'::jsonb IS NULL`, 'jsonb.json-null'],
    [`'{"a": 1.0, "b": 12345678901234567890}'::jsonb`, 'jsonb.number-text'],
    [`jsonb_set(CASE WHEN jsonb_typeof(${col}) = 'object' THEN ${col} ELSE '{}' END, '{a}', '5')`, 'jsonb.set'],
    [`to_jsonb(${r.pick(['id', "'x'::text", 'true'])})`, 'jsonb.to-jsonb'],
  ] as const;
  const picks = r.some(exprs, 2);
  picks.forEach(([, tag]) => f.add(tag));
  if (r.chance(0.2)) {
    f.add('jsonb.set-returning');
    const fn = r.pick(['jsonb_object_keys', 'jsonb_array_elements', 'jsonb_each']);
    const arg =
      fn === 'jsonb_array_elements' ? `CASE WHEN jsonb_typeof(${col}) = 'array' THEN ${col} END` : `CASE WHEN jsonb_typeof(${col}) = 'object' THEN ${col} END`;
    return q(`SELECT id, x.* FROM ${from}, ${fn}(${arg}) AS x`);
  }
  const filter = r.chance(0.3) ? ` WHERE ${col} ${r.pick([`->> 'a' = '1'`, `? 'a'`, `@> '{"n": 1}'`, 'IS NOT NULL'])}` : '';
  return q(`SELECT id, ${picks.map(([e], i) => `${e} AS j${i}`).join(', ')} FROM ${from}${filter}`);
}

export function dateTimeQuery(r: Rand, f: Features): Draft {
  const items = [
    ["hired + INTERVAL '1 day'", 'datetime.interval-add'],
    [`hired - ${literal(r, 'timestamptz', f)}`, 'datetime.timestamp-diff'],
    ["date_trunc('month', hired)", 'datetime.date_trunc'],
    ['EXTRACT(YEAR FROM hired)', 'datetime.extract'],
    ['EXTRACT(EPOCH FROM hired)', 'datetime.extract-epoch'],
    ["date_part('dow', birth)", 'datetime.date_part'],
    ['birth + 30', 'datetime.date-plus-int'],
    ["birth - DATE '1980-01-01'", 'datetime.date-diff'],
    ["hired AT TIME ZONE 'UTC'", 'datetime.at-time-zone'],
    ["timezone('Europe/Paris', hired)", 'datetime.timezone-fn'],
    ["to_char(hired, 'YYYY-MM-DD HH24:MI')", 'datetime.to_char'],
    ['hired::date', 'datetime.cast-date'],
    ["INTERVAL '2 hours 30 minutes' * 2", 'datetime.interval-literal'],
    ["age(TIMESTAMP '2024-01-01', birth::timestamp)", 'datetime.age'],
    ['make_date(2024, 2, 29)', 'datetime.make_date'],
    ["hired > TIMESTAMPTZ '2023-06-01 00:00:00+00'", 'typed-literal.timestamptz'],
    ["justify_hours(INTERVAL '50 hours')", 'datetime.justify'],
    ["birth + INTERVAL '1 month'", 'datetime.date-plus-interval'],
    ['hired::timestamp', 'datetime.cast-timestamp'],
    ['to_timestamp(1700000000)', 'datetime.to_timestamp'],
  ] as const;
  if (r.chance(0.25)) {
    f.add('datetime.events');
    return q(
      `SELECT id, at, ${r.pick(["at + INTERVAL '90 minutes'", "date_trunc('day', at)", 'EXTRACT(MONTH FROM at)', 'at::date', "at - TIMESTAMP '2024-01-01 00:00:00'"])} AS x FROM events WHERE at ${r.pick(['>', '<'])} ${literal(r, 'timestamp', f)}`,
    );
  }
  const picks = r.some(items, 2);
  picks.forEach(([, tag]) => f.add(tag));
  const filter = r.chance(0.3) ? ` WHERE hired ${r.pick(['>', '<='])} ${literal(r, 'timestamptz', f)}` : '';
  return q(`SELECT id, ${picks.map(([e], i) => `${e} AS t${i}`).join(', ')} FROM emp${filter}`);
}

export function arrayQuery(r: Rand, f: Features): Draft {
  const choices = [
    ["SELECT ARRAY[1, 2, 3] AS a, ARRAY['x', NULL] AS b", 'array.literal'],
    ['SELECT id FROM emp WHERE dept_id = ANY(ARRAY[1, 3])', 'array.any'],
    ["SELECT id FROM emp WHERE name <> ALL(ARRAY['ann', 'bob'])", 'array.all'],
    ['SELECT unnest(ARRAY[3, 1, 2]) AS u', 'array.unnest-select'],
    ['SELECT u.x FROM unnest(ARRAY[1, 2, NULL]) AS u(x)', 'array.unnest-from'],
    ['SELECT array_length(ARRAY[1, 2, 3], 1) AS n, cardinality(ARRAY[1]) AS c', 'array.length'],
    ['SELECT (ARRAY[10, 20, 30])[2] AS second', 'array.subscript'],
    ['SELECT ARRAY[1, 2] || 3 AS cat', 'array.concat'],
    ["SELECT array_to_string(ARRAY['a', 'b'], '-') AS s", 'array.to-string'],
    ['SELECT dept_id, array_agg(id ORDER BY id) AS ids FROM emp GROUP BY dept_id', 'array.agg'],
    ['SELECT id, labels FROM tags', 'array.column'],
    ["SELECT id FROM tags WHERE 'a' = ANY(labels)", 'array.column-any'],
    ['SELECT id, scores[1] AS s1 FROM tags', 'array.column-subscript'],
    ['SELECT generate_series(1, 4) AS g', 'srf.generate_series-select'],
    ['SELECT g FROM generate_series(1, 10, 3) AS g', 'srf.generate_series-from'],
    ['SELECT ARRAY(SELECT id FROM dept ORDER BY id) AS a', 'array.subquery'],
    ["SELECT string_to_array('a,b,c', ',') AS a", 'array.string_to_array'],
  ] as const;
  const [sql, tag] = r.pick(choices);
  f.add(tag);
  return q(sql);
}

export function paramQuery(r: Rand, f: Features): Draft {
  f.add('param');
  const choices: [string, unknown[]][] = [
    ['SELECT id, name FROM emp WHERE dept_id = $1', [r.int(1, 4)]],
    ['SELECT id FROM emp WHERE salary > $1 AND name LIKE $2', [String(r.int(1000, 8000)), 'a%']],
    ['SELECT $1::int + id AS x FROM dept', [r.int(0, 9)]],
    ['SELECT id FROM emp ORDER BY id LIMIT $1', [r.int(0, 5)]],
    ['SELECT id FROM events WHERE kind = $1 OR amount < $2', ['sale', r.int(-10, 50)]],
    ['SELECT count(*) AS n FROM emp WHERE active = $1', [r.chance(0.5)]],
  ];
  const [sql, params] = r.pick(choices);
  return { sql, params, ordered: sql.includes('ORDER BY'), changesData: false };
}

const dml = (sql: string): Draft => ({ sql, params: [], ordered: false, changesData: true });

export function dmlStatement(r: Rand, f: Features): Draft {
  const refs = refsOf(EMP, 'e');
  const returning = r.chance(0.6) ? ` RETURNING ${r.pick(['*', 'id', 'id, name', 'e.id, e.salary'])}` : '';
  if (returning) f.add('dml.returning');
  const id = r.int(1, 16);
  switch (r.int(0, 9)) {
    case 0:
      f.add('dml.insert');
      return dml(
        `INSERT INTO emp (id, dept_id, name, salary) VALUES (${20 + r.int(0, 3)}, ${r.int(1, 5)}, 'new', ${literal(r, 'numeric', f)})${returning.replace('e.', '').replace('e.', '')}`,
      );
    case 1:
      f.add('dml.insert-alias');
      return dml(`INSERT INTO emp AS e (id, name) VALUES (${20 + r.int(0, 3)}, 'n2')${returning}`);
    case 2:
      f.add('dml.on-conflict-nothing');
      return dml(`INSERT INTO emp (id, name) VALUES (${id}, 'dup') ON CONFLICT (id) DO NOTHING${returning.replace(/e\./g, '')}`);
    case 3:
      f.add('dml.on-conflict-update');
      return dml(
        `INSERT INTO emp AS e (id, name, salary) VALUES (${id}, 'up', 10.00) ON CONFLICT (id) DO UPDATE SET salary = COALESCE(e.salary, 0) + EXCLUDED.salary${r.chance(0.5) ? ' WHERE e.active IS NOT FALSE' : ''}${returning}`,
      );
    case 4:
      f.add('dml.update-alias');
      return dml(
        `UPDATE emp AS e SET salary = ${numExpr(
          r,
          refs.filter((x) => x.kind !== 'float'),
          f,
        )}, name = ${textExpr(r, refs, f)} WHERE ${boolExpr(r, refs, f)}${returning}`,
      );
    case 5:
      f.add('dml.update-from');
      return dml(
        `UPDATE emp e SET dept_id = d.parent_id FROM dept d WHERE e.dept_id = d.id AND d.parent_id IS NOT NULL${returning ? ' RETURNING e.id, d.name' : ''}`,
      );
    case 6:
      f.add('dml.delete-alias');
      return dml(`DELETE FROM emp e WHERE ${boolExpr(r, refs, f)}${returning}`);
    case 7:
      f.add('dml.delete-using');
      return dml(
        `DELETE FROM events v USING emp e WHERE v.emp_id = e.id AND ${r.pick(['e.active', 'e.dept_id = 2', 'e.salary > 5000'])}${returning ? ' RETURNING v.id' : ''}`,
      );
    case 8:
      f.add('dml.default');
      return dml(`INSERT INTO events (id, emp_id, kind, amount) VALUES (${100 + r.int(0, 5)}, 1, 'x', DEFAULT)${returning ? ' RETURNING id, amount' : ''}`);
    default:
      f.add('dml.insert-select');
      return dml(
        `INSERT INTO events (id, emp_id, kind, amount) SELECT id + 1000, id, 'copy', ${numExpr(
          r,
          refsOf(EMP, null).filter((x) => x.kind === 'int'),
          f,
        )}::int FROM emp WHERE ${boolExpr(r, refsOf(EMP, null), f)}${returning ? ' RETURNING id, amount' : ''}`,
      );
  }
}

/** Statements PostgreSQL refuses: svcdb must refuse them too. */
export function invalidStatement(r: Rand, f: Features): Draft {
  f.add('invalid');
  const refs = refsOf(EVENTS, null);
  return q(
    r.pick([
      'SELECT nope FROM emp',
      'SELECT * FROM missing_table',
      'SELECT id FROM emp GROUP BY dept_id',
      "SELECT 1 + 'abc'",
      'SELECT id FROM emp e JOIN dept d ON true',
      `SELECT ${textExpr(r, refs, f)} + 1 FROM events WHERE id = 1 AND false`,
      'SELECT 1/0',
      'INSERT INTO emp (id) VALUES (1)',
      'SELECT sum(name) FROM emp',
      'SELECT * FROM emp WHERE',
      'SELECT count(*) OVER (ORDER BY id) FROM emp GROUP BY 1',
      "SELECT '2024-13-01'::date",
      'SELECT 1 UNION SELECT 1, 2',
      'SELECT max(max(id)) FROM emp',
      "SELECT 'x'::int",
      'UPDATE emp SET nope = 1',
      'SELECT id FROM emp ORDER BY 5',
      'SELECT 2147483647::int + 1',
    ]),
  );
}
