/** Aggregate differential helper: `select agg(x)::text from (values ...) v(x)` against resolveAggregate. */
import { isSvcError } from '../../../core/errors.js';
import { T, typeSystem } from '../../../query/types/index.js';
import { evalValue } from './mini-sql.js';
import type { Oracle, Outcome } from './pg-oracle.js';

export interface AggCase { readonly agg: string; readonly values: readonly string[]; readonly extra?: string; readonly distinct?: boolean }

function ours(c: AggCase): Outcome {
  try {
    // VALUES unifies its rows' types (select_common_type), then each row is cast to that type.
    const raw = c.values.map(evalValue);
    const type = typeSystem.commonType(raw.map((v) => v.type)) ?? T.text;
    const vals = raw.map((v) => ({ type, value: v.value === null ? null : typeSystem.resolveCast(v.type, type, 'implicit')!(v.value) }));
    const extra = c.extra === undefined ? [] : [evalValue(c.extra)];
    const agg = typeSystem.resolveAggregate(c.agg, [type, ...extra.map((e) => e.type)], { distinct: c.distinct ?? false, star: false });
    if (agg === null) return { error: `aggregate ${c.agg} does not exist` };
    const casts = agg.argTypes.map((t, i) => typeSystem.resolveCast(i === 0 ? type : extra[i - 1]!.type, t, 'implicit')!);
    const st = agg.newState();
    const seen = new Set<string>();
    const key = typeSystem.hashKey(agg.argTypes[0]!);
    for (const v of vals) {
      const args = [v.value === null ? null : casts[0]!(v.value), ...extra.map((e, i) => (e.value === null ? null : casts[i + 1]!(e.value)))];
      if (agg.strict && args.some((a) => a === null)) continue;
      if (c.distinct) {
        const k = args[0] === null ? '\u0000null' : key(args[0]!);
        if (seen.has(k)) continue;
        seen.add(k);
      }
      st.step(args);
    }
    const r = st.result();
    return r === null ? null : typeSystem.formatText(agg.returnType, r);
  } catch (e) {
    if (isSvcError(e)) return { error: e.message };
    throw e;
  }
}

function sql(c: AggCase): string {
  const extra = c.extra === undefined ? '' : `, ${c.extra}`;
  const rows = c.values.map((v) => `(${v})`).join(', ');
  return `(select ${c.agg}(${c.distinct ? 'DISTINCT ' : ''}x${extra}) from (values ${rows}) v(x))`;
}

export async function diffAggregates(oracle: Oracle, cases: readonly AggCase[]): Promise<string[]> {
  const out: string[] = [];
  for (const c of cases) {
    const want = await oracle.text(sql(c));
    const got = ours(c);
    const same = want === null || got === null || typeof want === 'string' || typeof got === 'string' ? want === got : true;
    if (!same) out.push(`${sql(c)}\n   pg:   ${JSON.stringify(want)}\n   ours: ${JSON.stringify(got)}`);
  }
  return out;
}
