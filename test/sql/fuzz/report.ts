import { readFileSync } from 'node:fs';
import { errorSignature, type Judged, type Verdict } from './run.js';

/** Tallies of judged statements, and the allow-list of known failures. */

export interface Tally {
  statements: number;
  agree: number;
  bothRefuse: number;
  svcdbRefuses: number;
  pgRefuses: number;
  wrong: number;
  crash: number;
}

const FIELD: Record<Verdict, keyof Tally> = {
  agree: 'agree',
  'both-refuse': 'bothRefuse',
  'svcdb-refuses': 'svcdbRefuses',
  'pg-refuses': 'pgRefuses',
  wrong: 'wrong',
  crash: 'crash',
};
const empty = (): Tally => ({ statements: 0, agree: 0, bothRefuse: 0, svcdbRefuses: 0, pgRefuses: 0, wrong: 0, crash: 0 });

export interface Summary {
  readonly total: Tally;
  readonly byCategory: Record<string, Tally>;
  /** Feature -> [statements PostgreSQL accepted with it, of which svcdb refused]. */
  readonly byFeature: Record<string, [number, number]>;
  /** svcdb's refusal signature -> [count, an example statement]. */
  readonly refusals: Record<string, [number, string]>;
}

/** Counts verdicts overall, per category, per feature and per refusal signature. */
export function summarize(judged: readonly Judged[]): Summary {
  const total = empty();
  const byCategory: Record<string, Tally> = {};
  const byFeature: Record<string, [number, number]> = {};
  const refusals: Record<string, [number, string]> = {};
  for (const j of judged) {
    const cat = (byCategory[j.statement.category] ??= empty());
    for (const t of [total, cat]) {
      t.statements += 1;
      t[FIELD[j.verdict]] += 1;
    }
    if (j.pg.kind === 'rows') {
      for (const feature of j.statement.features) {
        const entry = (byFeature[feature] ??= [0, 0]);
        entry[0] += 1;
        if (j.verdict === 'svcdb-refuses') entry[1] += 1;
      }
    }
    if (j.verdict === 'svcdb-refuses') {
      const sig = errorSignature(j.svcdb);
      const entry = (refusals[sig] ??= [0, j.statement.sql]);
      entry[0] += 1;
    }
  }
  return { total, byCategory, byFeature, refusals };
}

/** The share of statements PostgreSQL accepts that svcdb refuses. */
export function refusalShare(t: Tally): number {
  const pgAccepts = t.agree + t.svcdbRefuses + t.wrong + t.crash;
  return pgAccepts === 0 ? 0 : t.svcdbRefuses / pgAccepts;
}

/** One known failure: its kind, a pattern over the statement's SQL, and why it is allowed for now. */
export interface AllowEntry {
  readonly verdict: Verdict;
  readonly pattern: RegExp;
  readonly reason: string;
  readonly line: string;
}

/** Reads the allow-list: `verdict :: regex over the SQL :: reason`, one a line; `#` starts a comment. */
export function readAllowList(path: string): AllowEntry[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [verdict, pattern, reason] = line.split(' :: ');
      if (!verdict || !pattern || !reason) throw new Error(`allow-list line is not "verdict :: regex :: reason": ${line}`);
      return { verdict: verdict as Verdict, pattern: new RegExp(pattern), reason, line };
    });
}

/** The entry that explains a failure, if any. */
export function allowedBy(list: readonly AllowEntry[], j: Judged): AllowEntry | undefined {
  return list.find((e) => e.verdict === j.verdict && e.pattern.test(j.statement.sql));
}

/** A failure for a human: verdict, category, SQL and what each side said. */
export function describe(j: Judged): string {
  const side = (o: Judged['pg']): string => (o.kind === 'error' ? `error ${o.code}: ${o.message}` : `${o.rows.length} rows`);
  return `[${j.verdict}] (${j.statement.category}) ${j.statement.sql}${j.statement.params.length ? `  params ${JSON.stringify(j.statement.params)}` : ''}\n    pg: ${side(j.pg)}\n    svcdb: ${side(j.svcdb)}${j.detail ? `\n    ${j.detail}` : ''}`;
}
