/**
 * The differential fuzzer's long run (issue 15): generated statements on PostgreSQL (PGlite) and on
 * svcdb's engine in process, judged by test/sql/fuzz/run.ts. Prints ONE JSON line: statements, the
 * share PostgreSQL accepts and svcdb refuses, wrong answers, crashes, per category (agreement =
 * agree + both-refuse over statements), per feature (refusal share), and the top refusal
 * signatures with an example statement each; failuresOutsideAllowList counts wrong answers, crashes
 * and accepted invalid statements that test/sql/fuzz/allow-list.txt does not explain.
 * Env: BENCH_FUZZ_SEEDS (default 10: seeds 1..N), BENCH_FUZZ_STATEMENTS per seed (default 300).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSql } from '../test/query/helpers.js';
import { generateStatements } from '../test/sql/fuzz/generate.js';
import { allowedBy, describe, readAllowList, refusalShare, summarize } from '../test/sql/fuzz/report.js';
import { FuzzRunner, type Judged } from '../test/sql/fuzz/run.js';
import { machineDescription, progress } from './lib/print-result.js';

const SEEDS = Number(process.env.BENCH_FUZZ_SEEDS ?? 10);
const PER_SEED = Number(process.env.BENCH_FUZZ_STATEMENTS ?? 300);
const TOP = 15;
const ALLOW_LIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'sql', 'fuzz', 'allow-list.txt');

const ratio = (n: number, d: number): number => (d === 0 ? 0 : Math.round((n / d) * 10_000) / 10_000);

async function main(): Promise<void> {
  const sql = await openSql();
  const runner = await FuzzRunner.open(sql.engine);
  const judged: Judged[] = [];
  const started = Date.now();
  try {
    for (let seed = 1; seed <= SEEDS; seed++) {
      for (const statement of generateStatements(seed, PER_SEED)) judged.push(await runner.judge(statement));
      progress(`seed ${seed}: ${judged.length} statements, ${Math.round((Date.now() - started) / 1000)} s`);
    }
  } finally {
    await runner.close();
    await sql.close();
  }
  const allowList = readAllowList(ALLOW_LIST);
  const failures = judged.filter((j) => j.verdict === 'wrong' || j.verdict === 'crash' || j.verdict === 'pg-refuses');
  const unexpected = failures.filter((j) => !allowedBy(allowList, j));
  for (const j of failures) progress(describe(j));
  const s = summarize(judged);
  const byCategory = Object.fromEntries(
    Object.entries(s.byCategory).map(([cat, t]) => [
      cat,
      {
        statements: t.statements,
        agreement: ratio(t.agree + t.bothRefuse, t.statements),
        svcdbRefuses: t.svcdbRefuses,
        refusalShare: ratio(refusalShare(t), 1),
        wrong: t.wrong,
        crash: t.crash,
        pgRefuses: t.pgRefuses,
      },
    ]),
  );
  const byFeature = Object.fromEntries(
    Object.entries(s.byFeature)
      .filter(([, [, refused]]) => refused > 0)
      .sort((a, b) => b[1][1] - a[1][1])
      .map(([feature, [accepted, refused]]) => [feature, { pgAccepts: accepted, svcdbRefuses: refused, share: ratio(refused, accepted) }]),
  );
  const topRefusals = Object.entries(s.refusals)
    .sort((a, b) => b[1][0] - a[1][0])
    .slice(0, TOP)
    .map(([signature, [count, example]]) => ({ signature, count, example }));
  const line = {
    bench: 'sql-fuzz',
    seeds: SEEDS,
    statements: s.total.statements,
    pgAcceptsSvcdbRefuses: s.total.svcdbRefuses,
    pgAcceptsSvcdbRefusesShare: ratio(refusalShare(s.total), 1),
    agreement: ratio(s.total.agree + s.total.bothRefuse, s.total.statements),
    wrongAnswers: s.total.wrong,
    crashes: s.total.crash,
    pgRefusesSvcdbAccepts: s.total.pgRefuses,
    failuresOutsideAllowList: unexpected.length,
    seconds: Math.round((Date.now() - started) / 1000),
    byCategory,
    byFeature,
    topRefusals,
    machine: machineDescription(),
    date: new Date().toISOString(),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

await main();
