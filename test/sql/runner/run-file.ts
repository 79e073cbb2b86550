import { readFile } from 'node:fs/promises';
import { compareResult, md5OfValues } from './compare.js';
import type { EngineResult, SqlEngine } from './engine.js';
import { formatRows } from './format.js';
import { appliesTo, parseSlt, type QueryRecord, type StatementRecord } from './parse.js';
import { portabilityProblems } from './portability.js';

export interface RunOptions {
  /** run.mjs --float3 (SQLite's files). Default false. */
  readonly float3?: boolean;
  /** run.mjs --auto-rowsort: a nosort query without ORDER BY is compared as rowsort. Default false. */
  readonly autoRowsort?: boolean;
  /** 'regex' (default): `statement error RE` must match the message; 'any': any error will do (as run.mjs). */
  readonly errorMatching?: 'regex' | 'any';
  /** Check each result is printed alike from PostgreSQL text and from JSON (for PGlite runs). */
  readonly checkPortability?: boolean;
}

export interface RecordFailure {
  readonly line: number;
  readonly sql: string;
  readonly expected: string;
  readonly actual: string;
}

export interface FileReport {
  readonly file: string;
  readonly engine: string;
  passed: number;
  skipped: number;
  readonly failures: RecordFailure[];
}

const errorMatches = (pattern: string | null, message: string, mode: 'regex' | 'any'): boolean =>
  pattern === null || mode === 'any' || new RegExp(pattern).test(message);

const expectationOfError = (pattern: string | null): string => (pattern === null ? 'an error' : `an error matching /${pattern}/`);

type Mismatch = Omit<RecordFailure, 'line' | 'sql'>;

function checkExpectedError(pattern: string | null, out: EngineResult, mode: 'regex' | 'any'): Mismatch | null {
  if (out.kind === 'rows') return { expected: expectationOfError(pattern), actual: 'success' };
  return errorMatches(pattern, out.message, mode) ? null : { expected: expectationOfError(pattern), actual: `error: ${out.message}` };
}

function checkStatement(r: StatementRecord, out: EngineResult, mode: 'regex' | 'any'): Mismatch | null {
  if (r.expectError) return checkExpectedError(r.errorPattern, out, mode);
  return out.kind === 'error' ? { expected: 'success', actual: `error: ${out.message}` } : null;
}

function checkQuery(r: QueryRecord, out: EngineResult, options: RunOptions, labels: Map<string, string>): Mismatch | null {
  if (r.expectError) return checkExpectedError(r.errorPattern, out, options.errorMatching ?? 'regex');
  if (out.kind === 'error') return { expected: (r.expected ?? []).join('\n'), actual: `error: ${out.message}` };
  if (r.types.length !== out.columns.length) {
    return {
      expected: `${r.types.length} column(s) (query ${r.types})`,
      actual: `${out.columns.length} column(s): ${out.columns.map((c) => c.name).join(', ')}`,
    };
  }
  const sort = options.autoRowsort && r.sort === 'nosort' && !/order\s+by/i.test(r.sql) ? 'rowsort' : r.sort;
  const rows = formatRows(
    out.rows,
    r.types,
    out.columns.map((c) => c.type),
    { float3: options.float3 ?? false },
  );
  const comparison = compareResult(rows, r.expected, sort, r.hashThreshold);
  if (!comparison.ok) return { expected: (r.expected ?? []).join('\n'), actual: comparison.actualLines.join('\n') };
  if (r.label !== null) {
    const hash = md5OfValues(rows.flat());
    const seen = labels.get(r.label);
    if (seen !== undefined && seen !== hash) return { expected: `the result of the earlier query labelled ${r.label}`, actual: 'a different result' };
    labels.set(r.label, hash);
  }
  if (options.checkPortability) {
    const problems = portabilityProblems(out.columns, out.rows);
    if (problems.length > 0) return { expected: 'a result that prints alike as PostgreSQL text and as JSON', actual: problems.join('; ') };
  }
  return null;
}

/** Runs a .slt text's records in order on one engine; never stops at a failure (except `halt`). */
export async function runSltText(text: string, file: string, engine: SqlEngine, options: RunOptions = {}): Promise<FileReport> {
  const report: FileReport = { file, engine: engine.name, passed: 0, skipped: 0, failures: [] };
  const labels = new Map<string, string>();
  for (const r of parseSlt(text)) {
    if (!appliesTo(r.conditions, engine.dialects)) {
      report.skipped++;
      continue;
    }
    if (r.kind === 'halt') break;
    const out = await engine.execute(r.sql);
    const failure = r.kind === 'statement' ? checkStatement(r, out, options.errorMatching ?? 'regex') : checkQuery(r, out, options, labels);
    if (failure === null) report.passed++;
    else report.failures.push({ line: r.line, sql: r.sql, ...failure });
  }
  return report;
}

export async function runSltFile(path: string, engine: SqlEngine, options: RunOptions = {}, label = path): Promise<FileReport> {
  return runSltText(await readFile(path, 'utf8'), label, engine, options);
}

const indent = (text: string, pad: string): string =>
  text
    .split('\n')
    .map((l) => pad + l)
    .join('\n');

/** Every failure of a file: file:line, SQL, expected, actual. */
export function describeFailures(report: FileReport): string {
  const parts = report.failures.map((f) =>
    [
      `${report.file}:${f.line}`,
      indent(f.sql, '    sql      | '),
      indent(f.expected === '' ? '(no rows)' : f.expected, '    expected | '),
      indent(f.actual === '' ? '(no rows)' : f.actual, '    actual   | '),
    ].join('\n'),
  );
  return `${report.failures.length} of ${report.failures.length + report.passed} records failed on ${report.engine}:\n\n${parts.join('\n\n')}`;
}
