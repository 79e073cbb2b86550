import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../helpers/sql-server.js';
import { generateCase, type DifferentialCase, type GeneratedQuery } from './differential/generate.js';
import { formatValue, PgliteEngine, requireQueryRoute, SvcdbHttpEngine, type EngineResult, type SqlEngine } from './runner/index.js';

/**
 * Differential test: generated schemas, data and queries run on PostgreSQL (PGlite) and on svcdb
 * (a real server, over HTTP); results must be equal — as multisets, or in order when the query's
 * ORDER BY is a total order. Values are compared in the .slt runner's text form (PostgreSQL's
 * text output; svcdb's JSON values formatted the way run.mjs does).
 *
 * SQL_DIFF_SEEDS=7,8 picks the cases (default 1..5), SQL_DIFF_QUERIES the queries per case
 * (default 40): 5 × (40 queries + 6 mutation steps) ≈ 230 statements.
 * A missing POST /api/v1/query fails the svcdb half, never skips it.
 */
const SEEDS = (process.env.SQL_DIFF_SEEDS ?? '1,2,3,4,5')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter((n) => Number.isInteger(n));
const QUERIES_PER_CASE = Number(process.env.SQL_DIFF_QUERIES ?? 40);
const MISMATCHES_SHOWN = 25;

interface Outcome {
  readonly error: string | null;
  readonly rows: readonly string[];
  readonly columnCount: number;
}

/** Rows as comparable strings; sorted unless the query's order is part of the answer. */
function outcome(result: EngineResult, ordered: boolean): Outcome {
  if (result.kind === 'error') return { error: result.message, rows: [], columnCount: 0 };
  const types = result.columns.map((c) => c.type);
  const rows = result.rows.map((row) => row.map((v, j) => formatValue(v, undefined, types[j] ?? '', { float3: false })).join(' | '));
  if (!ordered) rows.sort();
  return { error: null, rows, columnCount: result.columns.length };
}

interface Step {
  readonly seed: number;
  readonly query: GeneratedQuery;
  readonly expected: Outcome;
}

const cases: DifferentialCase[] = SEEDS.map((seed) => generateCase(seed, QUERIES_PER_CASE));
const allSteps = (c: DifferentialCase): GeneratedQuery[] => [...c.queries, ...c.mutations];

/** Runs setup then every query/mutation of each case; setup errors are thrown for PGlite, returned for svcdb. */
async function runCases(engine: SqlEngine): Promise<{ setupErrors: string[]; outcomes: Outcome[][] }> {
  const setupErrors: string[] = [];
  const outcomes: Outcome[][] = [];
  for (const c of cases) {
    let failed = false;
    for (const sql of c.setup) {
      const out = await engine.execute(sql);
      if (out.kind === 'error') {
        setupErrors.push(`seed ${c.seed}: ${sql.slice(0, 200)}\n    -> ${out.message}`);
        failed = true;
        break;
      }
    }
    const results: Outcome[] = [];
    for (const q of allSteps(c)) results.push(failed ? { error: 'setup failed', rows: [], columnCount: 0 } : outcome(await engine.execute(q.sql), q.ordered));
    outcomes.push(results);
  }
  return { setupErrors, outcomes };
}

function describeMismatch(step: Step, actual: Outcome): string {
  const show = (o: Outcome): string =>
    o.error !== null
      ? `error: ${o.error}`
      : o.rows.length === 0
        ? '(no rows)'
        : o.rows.slice(0, 12).join('\n      ') + (o.rows.length > 12 ? `\n      … ${o.rows.length} rows` : '');
  return [
    `seed ${step.seed} (${step.query.ordered ? 'ordered' : 'multiset'}): ${step.query.sql}`,
    `    postgres: ${show(step.expected)}`,
    `    svcdb:    ${show(actual)}`,
  ].join('\n');
}

describe('differential: generated SQL on PostgreSQL (PGlite) and svcdb', () => {
  let pglite: PgliteEngine;
  const steps: Step[] = [];

  beforeAll(async () => {
    pglite = await PgliteEngine.create();
    const { setupErrors, outcomes } = await runCases(pglite);
    if (setupErrors.length > 0) throw new Error(`generated setup fails on PostgreSQL:\n${setupErrors.join('\n')}`);
    cases.forEach((c, i) => allSteps(c).forEach((query, j) => steps.push({ seed: c.seed, query, expected: outcomes[i]![j]! })));
  });
  afterAll(async () => {
    await pglite?.close();
  });

  it('generates valid PostgreSQL: every query runs, and most return rows', () => {
    const errors = steps.filter((s) => s.expected.error !== null).map((s) => `seed ${s.seed}: ${s.query.sql}\n    -> ${s.expected.error}`);
    expect(errors, errors.join('\n')).toEqual([]);
    expect(steps.length).toBeGreaterThanOrEqual(SEEDS.length * QUERIES_PER_CASE);
    const nonEmpty = steps.filter((s) => s.expected.rows.length > 0).length;
    expect(nonEmpty / steps.length).toBeGreaterThan(0.5);
  });

  it('svcdb returns what PostgreSQL returns', async () => {
    const server = await startTestServer();
    try {
      await requireQueryRoute(server.baseUrl, server.apiKey);
      const { setupErrors, outcomes } = await runCases(new SvcdbHttpEngine(server.baseUrl, server.apiKey));
      const actual = outcomes.flat();
      const mismatches: string[] = [];
      steps.forEach((step, k) => {
        const got = actual[k]!;
        const same =
          got.error === null &&
          got.columnCount === step.expected.columnCount &&
          got.rows.length === step.expected.rows.length &&
          got.rows.every((r, i) => r === step.expected.rows[i]);
        if (!same) mismatches.push(describeMismatch(step, got));
      });
      const report = [
        ...(setupErrors.length > 0 ? [`setup failed on svcdb:\n${setupErrors.join('\n')}`] : []),
        `${mismatches.length} of ${steps.length} generated statements differ (SQL_DIFF_SEEDS=${SEEDS.join(',')}):`,
        ...mismatches.slice(0, MISMATCHES_SHOWN),
        ...(mismatches.length > MISMATCHES_SHOWN ? [`… and ${mismatches.length - MISMATCHES_SHOWN} more`] : []),
      ].join('\n\n');
      if (setupErrors.length > 0 || mismatches.length > 0) expect.fail(report);
    } finally {
      await server.close();
    }
  });
});
