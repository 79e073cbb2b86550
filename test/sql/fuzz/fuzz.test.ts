import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSql, type SqlHarness } from '../../query/helpers.js';
import { generateStatements } from './generate.js';
import { allowedBy, describe as describeJudged, readAllowList, summarize } from './report.js';
import { FuzzRunner, type Judged } from './run.js';

/**
 * The differential fuzzer's fixed budget: generated statements run on PostgreSQL (PGlite) and on
 * svcdb's engine in process (test/sql/fuzz/run.ts judges them). Hard failures only where svcdb must
 * never go: a wrong answer, a crash, or accepting what PostgreSQL refuses; known ones are listed in
 * allow-list.txt with a reason, and anything else fails. Refusals are counted by bench/sql-fuzz.ts.
 * SQL_FUZZ_SEEDS=7,8 and SQL_FUZZ_STATEMENTS (per seed) replay other runs.
 */
const SEEDS = (process.env.SQL_FUZZ_SEEDS ?? '1,2').split(',').map(Number).filter(Number.isInteger);
const PER_SEED = Number(process.env.SQL_FUZZ_STATEMENTS ?? 150);
const here = path.dirname(fileURLToPath(import.meta.url));
const ALLOW_LIST = readAllowList(path.join(here.replace(`${path.sep}dist${path.sep}`, path.sep), 'allow-list.txt'));

describe('differential fuzzer: generated SQL on PostgreSQL (PGlite) and svcdb', () => {
  let sql: SqlHarness;
  let runner: FuzzRunner;
  const judged: Judged[] = [];

  beforeAll(async () => {
    sql = await openSql();
    runner = await FuzzRunner.open(sql.engine);
    for (const seed of SEEDS) for (const statement of generateStatements(seed, PER_SEED)) judged.push(await runner.judge(statement));
  }, 120_000);
  afterAll(async () => {
    await runner?.close();
    await sql?.close();
  });

  it('generates statements PostgreSQL accepts, and invalid ones it refuses', () => {
    const valid = judged.filter((j) => j.statement.category !== 'invalid');
    const refusedByPg = valid.filter((j) => j.pg.kind === 'error').map(describeJudged);
    expect(refusedByPg, refusedByPg.join('\n')).toEqual([]);
    const invalidAccepted = judged.filter((j) => j.statement.category === 'invalid' && j.pg.kind === 'rows').map(describeJudged);
    expect(invalidAccepted, invalidAccepted.join('\n')).toEqual([]);
    expect(judged.length).toBe(SEEDS.length * PER_SEED);
  });

  it('svcdb accepts the whole schema and data, the array-column table included', () => {
    expect(runner.svcdbSetupErrors).toEqual([]);
  });

  it('svcdb never answers wrong, never crashes, never accepts what PostgreSQL refuses (beyond allow-list.txt)', () => {
    const failures = judged.filter((j) => j.verdict === 'wrong' || j.verdict === 'crash' || j.verdict === 'pg-refuses');
    const unexpected = failures.filter((j) => !allowedBy(ALLOW_LIST, j)).map(describeJudged);
    const stale = ALLOW_LIST.filter((e) => !failures.some((j) => allowedBy([e], j)));
    if (stale.length > 0) console.warn(`allow-list lines matching no failure in this run (fixed? remove them):\n${stale.map((e) => e.line).join('\n')}`);
    const total = summarize(judged).total;
    expect(unexpected, `${unexpected.length} new failures (of ${total.statements} statements; ${JSON.stringify(total)}):\n${unexpected.join('\n')}`).toEqual(
      [],
    );
  });
});
