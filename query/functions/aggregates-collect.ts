/** The collecting aggregates: string_agg, array_agg, jsonb_agg, jsonb_object_agg and json_agg / json_object_agg. */
import type { JsonValue } from '../../core/values.js';
import { asElement, jsonbKeyText, setKey, type JsonObject } from '../types/jsonb.js';
import type { QValue } from '../types/contract.js';
import { arrayOf, T } from '../types/qtype.js';
import { dataError } from '../types/errors.js';
import { toJsonb } from './to-jsonb.js';
import { state, type AggDef } from './aggregate-def.js';

function collectDefs(): AggDef[] {
  return [
    {
      name: 'string_agg',
      params: [T.text, T.text],
      ret: T.text,
      strict: false,
      state: () =>
        state<string | null>(
          null,
          (s, [v, d]) => (v === null ? s : s === null ? (v as string) : s + ((d as string | null) ?? '') + (v as string)),
          (s) => s,
        ),
    },
    {
      name: 'array_agg',
      params: ['anynonarray'],
      ret: (p) => arrayOf(p[0]!),
      strict: false,
      // result() copies: a window calls it after every row, and must not see later rows appear.
      state: () =>
        state<QValue[] | null>(
          null,
          (s, [v]) => {
            const a = s ?? [];
            a.push(v ?? null);
            return a;
          },
          (s) => (s === null ? null : [...s]),
        ),
    },
    {
      name: 'jsonb_agg',
      params: ['anyelement'],
      ret: T.jsonb,
      strict: false,
      state: (p) =>
        state<JsonValue[] | null>(
          null,
          (s, [v]) => {
            const a = s ?? [];
            a.push(asElement(toJsonb(p[0]!, v ?? null)));
            return a;
          },
          (s) => (s === null ? null : [...s]),
        ),
    },
    {
      name: 'jsonb_object_agg',
      params: ['any', 'any'],
      ret: T.jsonb,
      strict: false,
      state: (p) =>
        state<JsonObject | null>(
          null,
          (s, [k, v]) => {
            if (k === null) throw dataError('field name must not be null', '22004');
            const o = s ?? {};
            const key = toJsonb(p[0]!, k!);
            setKey(o, jsonbKeyText(key), asElement(toJsonb(p[1]!, v ?? null)));
            return o;
          },
          (s) => (s === null ? null : { ...s }),
        ),
    },
  ];
}

/** json_agg and json_object_agg are the jsonb aggregates under PostgreSQL's json names (svcdb's json is jsonb: fn-jsonb.ts JSON_FN_DEFS). */
function jsonTwins(defs: readonly AggDef[]): AggDef[] {
  return defs.filter((d) => d.name === 'jsonb_agg' || d.name === 'jsonb_object_agg').map((d) => ({ ...d, name: d.name.replace('jsonb', 'json') }));
}

export const COLLECT_DEFS: readonly AggDef[] = [...collectDefs(), ...jsonTwins(collectDefs())];
