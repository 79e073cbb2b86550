/**
 * String operators: || (text, text with any non-array value, arrays, jsonb, vectors), LIKE family
 * (~~ ~~* !~~ !~~*), regular expressions (~ ~* !~ !~*) and like_escape for LIKE ... ESCAPE.
 */
import type { QValue } from '../types/contract.js';
import type { JsonValue } from '../../core/values.js';
import { T } from '../types/qtype.js';
import { formatText } from '../types/text-io.js';
import { jsonbConcat } from './jsonb-ops.js';
import { like, likeEscape, regexMatch } from './pattern.js';
import type { FnDef, Impl } from './registry.js';
import { vectorConcat } from './vector-math.js';

function textBool(name: string, test: (a: string, b: string) => boolean): FnDef {
  return {
    name,
    params: [T.text, T.text],
    ret: T.bool,
    make:
      () =>
      ([a, b]) =>
        test(a as string, b as string),
  };
}

const arrayCat: Impl = ([a, b]) => {
  if (a === null) return b ?? null;
  if (b === null) return a;
  return [...(a as readonly QValue[]), ...(b as readonly QValue[])];
};

function concatDefs(): FnDef[] {
  return [
    {
      name: '||',
      params: [T.text, T.text],
      ret: T.text,
      make:
        () =>
        ([a, b]) =>
          (a as string) + (b as string),
    },
    {
      name: '||',
      params: ['anynonarray', T.text],
      ret: T.text,
      make:
        (p) =>
        ([a, b]) =>
          formatText(p[0]!, a!) + (b as string),
    },
    {
      name: '||',
      params: [T.text, 'anynonarray'],
      ret: T.text,
      make:
        (p) =>
        ([a, b]) =>
          (a as string) + formatText(p[1]!, b!),
    },
    { name: '||', params: ['anycompatiblearray', 'anycompatiblearray'], ret: (p) => p[0]!, strict: false, make: () => arrayCat },
    {
      name: '||',
      params: ['anycompatiblearray', 'anycompatible'],
      ret: (p) => p[0]!,
      strict: false,
      make:
        () =>
        ([a, b]) => [...((a ?? []) as readonly QValue[]), b ?? null],
    },
    {
      name: '||',
      params: ['anycompatible', 'anycompatiblearray'],
      ret: (p) => p[1]!,
      strict: false,
      make:
        () =>
        ([a, b]) => [a ?? null, ...((b ?? []) as readonly QValue[])],
    },
    {
      name: '||',
      params: [T.jsonb, T.jsonb],
      ret: T.jsonb,
      make:
        () =>
        ([a, b]) =>
          jsonbConcat(a as JsonValue, b as JsonValue),
    },
    {
      name: '||',
      params: [T.vector, T.vector],
      ret: T.vector,
      make:
        () =>
        ([a, b]) =>
          vectorConcat(a as Float32Array, b as Float32Array),
    },
  ];
}

function patternDefs(): FnDef[] {
  return [
    textBool('~~', (a, b) => like(a, b, false)),
    textBool('!~~', (a, b) => !like(a, b, false)),
    textBool('~~*', (a, b) => like(a, b, true)),
    textBool('!~~*', (a, b) => !like(a, b, true)),
    textBool('~', (a, b) => regexMatch(a, b, false)),
    textBool('!~', (a, b) => !regexMatch(a, b, false)),
    textBool('~*', (a, b) => regexMatch(a, b, true)),
    textBool('!~*', (a, b) => !regexMatch(a, b, true)),
    {
      name: 'like_escape',
      params: [T.text, T.text],
      ret: T.text,
      make:
        () =>
        ([a, b]) =>
          likeEscape(a as string, b as string),
    },
    textBool('like', (a, b) => like(a, b, false)),
    textBool('ilike', (a, b) => like(a, b, true)),
  ];
}

export const TEXT_OP_DEFS: readonly FnDef[] = [...concatDefs(), ...patternDefs()];
