import type { ResultColumn } from './engine.js';
import { pgArray, pgJson } from './format.js';

/**
 * Checks, on PGlite's text output, that a result prints the same when it comes from svcdb as JSON
 * and goes through run.mjs's formatting. A .slt file whose results pass these checks behaves the
 * same on PostgreSQL and over HTTP; one that fails them asks for something JSON cannot say
 * (cast the column to text, or pick other values).
 */

/** Types whose JSON form is not PostgreSQL's text form (e.g. timestamps are ISO 8601 in JSON). */
const TEXT_DIFFERS = new Set([
  'timestamp',
  'timestamptz',
  'time',
  'timetz',
  'interval',
  'bytea',
  'money',
  'inet',
  'cidr',
  'macaddr',
  'bit',
  'varbit',
  'xml',
  'record',
  'tsvector',
  'tsquery',
  'point',
]);

/** Parses PostgreSQL's array text ({a,"b c",NULL,{1,2}}) into nested arrays of strings and nulls. */
export function parsePgArray(text: string): unknown[] | null {
  let i = 0;
  const parseLevel = (): unknown[] | null => {
    if (text[i] !== '{') return null;
    i++;
    const out: unknown[] = [];
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      if (text[i] === '{') {
        const inner = parseLevel();
        if (inner === null) return null;
        out.push(inner);
      } else if (text[i] === '"') {
        i++;
        let s = '';
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\') i++;
          s += text[i];
          i++;
        }
        i++;
        out.push(s);
      } else {
        let s = '';
        while (i < text.length && text[i] !== ',' && text[i] !== '}') s += text[i++];
        out.push(s === 'NULL' ? null : s);
      }
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return out;
      }
      return null;
    }
  };
  const parsed = parseLevel();
  return parsed !== null && i === text.length ? parsed : null;
}

function floatProblem(v: string): string | null {
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return `${v} has no JSON form`;
  const js = String(Number(v));
  return js === v ? null : `float ${v} prints as ${js} in JavaScript`;
}

function jsonProblem(v: string): string | null {
  if (v.startsWith('"')) return `jsonb string scalar ${v} loses its quotes in run.mjs (use ->> for text)`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    return `jsonb ${v} is not JSON`;
  }
  const again = pgJson(parsed);
  return again === v ? null : `jsonb ${v} prints as ${again} after a JSON round trip (number form or key order)`;
}

function valueProblem(type: string, v: string): string | null {
  if (v.includes('\n')) return 'a value holds a newline';
  if (type === 'float4' || type === 'float8') return floatProblem(v);
  if (type === 'json' || type === 'jsonb') return jsonProblem(v);
  if (type.startsWith('_')) {
    const element = type.slice(1);
    if (TEXT_DIFFERS.has(element) || element === 'json' || element === 'jsonb') return `array of ${element}`;
    const parsed = parsePgArray(v);
    if (parsed === null) return `array text ${v} does not parse`;
    const again = pgArray(parsed);
    return again === v ? null : `array ${v} prints as ${again} from JSON`;
  }
  return null;
}

/** Problems of one result (empty when it is portable). Rows hold PostgreSQL text or null. */
export function portabilityProblems(columns: readonly ResultColumn[], rows: readonly (readonly unknown[])[]): string[] {
  const problems: string[] = [];
  columns.forEach((c, j) => {
    if (TEXT_DIFFERS.has(c.type)) {
      problems.push(`column ${j + 1} (${c.name}) is ${c.type}: its JSON form is not its text form — cast it to text`);
      return;
    }
    for (const row of rows) {
      const v = row[j];
      if (typeof v !== 'string') continue;
      const problem = valueProblem(c.type, v);
      if (problem !== null) {
        problems.push(`column ${j + 1} (${c.name}, ${c.type}): ${problem}`);
        return;
      }
    }
  });
  return problems;
}
