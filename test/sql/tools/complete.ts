/**
 * Fills in a draft .slt file's expected results from real PostgreSQL (PGlite), like sqllogictest's
 * --complete. Run it by hand after editing a file, review the diff, commit the file:
 *
 *   npm run build && node dist/test/sql/tools/complete.js test/sql/joins.slt [more.slt ...]
 *   node dist/test/sql/tools/complete.js --check test/sql/*.slt     # exit 1 if a file would change
 *
 * For each query it writes `----` and PostgreSQL's result (rowsort order for rowsort, one value per
 * line for valuesort, `N values hashing to MD5` past the file's hash-threshold). It also fills in
 * a missing or wrong type string (`query` or `query ?`: I for integers, R for floats and numerics,
 * T otherwise), adds `rowsort` to a query header without a sort mode and without its own ORDER BY, and
 * fills in the regex of a `statement error` / `query error` without one from PostgreSQL's message.
 * It reports (and exits 1 on) statements PostgreSQL rejects that the file says are ok, expected
 * errors that do not happen, and results that would print differently when they come from svcdb
 * as JSON (see runner/portability.ts). Tests never run this: they compare against the committed file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { expectedLinesFor } from '../runner/compare.js';
import type { ResultColumn } from '../runner/engine.js';
import { formatRows } from '../runner/format.js';
import { appliesTo, hasTopLevelOrderBy, parseSlt, type QueryRecord, type SltRecord } from '../runner/parse.js';
import { PgliteEngine } from '../runner/pglite-engine.js';
import { portabilityProblems } from '../runner/portability.js';

const INTEGER_TYPES = new Set(['int2', 'int4', 'int8']);
const REAL_TYPES = new Set(['float4', 'float8', 'numeric']);

export function typeLetters(columns: readonly ResultColumn[]): string {
  return columns.map((c) => (INTEGER_TYPES.has(c.type) ? 'I' : REAL_TYPES.has(c.type) ? 'R' : 'T')).join('');
}

/** A regex that matches exactly this message (PostgreSQL's error text). */
export function escapeRegex(message: string): string {
  return message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Edit {
  /** 0-based line index range [start, end) to replace. */
  readonly start: number;
  readonly end: number;
  readonly lines: readonly string[];
}

function queryHeader(r: QueryRecord, types: string, sort: string): string {
  return ['query', types, sort, r.label ?? ''].filter((t) => t !== '').join(' ');
}

async function completeRecord(r: SltRecord, headerText: string, engine: PgliteEngine, edits: Edit[], problems: string[], where: string): Promise<void> {
  if (r.kind === 'halt') return;
  const out = await engine.execute(r.sql);
  const header = r.line - 1;
  if (r.expectError) {
    if (out.kind === 'rows') problems.push(`${where}: expected an error, PostgreSQL succeeded`);
    else if (r.errorPattern === null) edits.push({ start: header, end: header + 1, lines: [`${r.kind} error ${escapeRegex(out.message)}`] });
    else if (!new RegExp(r.errorPattern).test(out.message)) problems.push(`${where}: error /${r.errorPattern}/ does not match PostgreSQL's "${out.message}"`);
    return;
  }
  if (out.kind === 'error') {
    problems.push(`${where}: PostgreSQL says: ${out.message}`);
    return;
  }
  if (r.kind === 'statement') return;
  const types = r.types === '' || r.types === '?' || r.types.length !== out.columns.length ? typeLetters(out.columns) : r.types;
  const explicitSort = /^query\s+\S+\s+(nosort|rowsort|valuesort)\b/.test(headerText);
  const sort = explicitSort || hasTopLevelOrderBy(r.sql) ? r.sort : 'rowsort';
  const newHeader = queryHeader(r, types, explicitSort || sort === 'rowsort' ? sort : '');
  if (newHeader !== headerText) edits.push({ start: header, end: header + 1, lines: [newHeader] });
  const rows = formatRows(
    out.rows,
    types,
    out.columns.map((c) => c.type),
    { float3: false },
  );
  const expected = expectedLinesFor(rows, sort, r.hashThreshold);
  edits.push({ start: r.resultLines[0], end: r.resultLines[1], lines: ['----', ...expected] });
  for (const p of portabilityProblems(out.columns, out.rows)) problems.push(`${where}: ${p}`);
  if (!hasTopLevelOrderBy(r.sql) && sort === 'nosort' && out.rows.length > 1) problems.push(`${where}: ${out.rows.length} rows without ORDER BY: use rowsort`);
}

export async function completeText(text: string, file: string, engine: PgliteEngine): Promise<{ text: string; problems: string[] }> {
  const lines = text.split('\n');
  const edits: Edit[] = [];
  const problems: string[] = [];
  for (const r of parseSlt(text)) {
    if (!appliesTo(r.conditions, engine.dialects)) continue;
    if (r.kind === 'halt') break;
    await completeRecord(r, lines[r.line - 1]!.trim(), engine, edits, problems, `${file}:${r.line}`);
  }
  edits.sort((a, b) => b.start - a.start);
  for (const e of edits) lines.splice(e.start, e.end - e.start, ...e.lines);
  return { text: lines.join('\n'), problems };
}

async function main(argv: readonly string[]): Promise<number> {
  const check = argv.includes('--check');
  const files = argv.filter((a) => a !== '--check');
  if (files.length === 0) {
    process.stderr.write('usage: node dist/test/sql/tools/complete.js [--check] FILE.slt...\n');
    return 2;
  }
  const engine = await PgliteEngine.create();
  let status = 0;
  try {
    for (const file of files) {
      await engine.reset();
      const before = await readFile(file, 'utf8');
      const { text, problems } = await completeText(before, file, engine);
      for (const p of problems) process.stderr.write(`${p}\n`);
      if (problems.length > 0) status = 1;
      if (text === before) process.stderr.write(`${file}: up to date\n`);
      else if (check) {
        process.stderr.write(`${file}: expected results differ from PostgreSQL's\n`);
        status = 1;
      } else {
        await writeFile(file, text);
        process.stderr.write(`${file}: completed\n`);
      }
    }
  } finally {
    await engine.close();
  }
  return status;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  process.exitCode = await main(process.argv.slice(2));
}
