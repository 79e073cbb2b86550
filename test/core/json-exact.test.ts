import { describe, expect, it } from 'vitest';
import { canonicalNumberText, JSON_NULL, JsonNumber, parseJsonExact, stringifyJson } from '../../core/json-exact.js';

/** core/json-exact.ts: jsonb documents with exact numbers and a JSON null of their own. */
describe('exact JSON', () => {
  it('writes a number token as PostgreSQL numeric text', () => {
    const cases: [string, string][] = [
      ['1.0', '1.0'],
      ['1.50', '1.50'],
      ['1e2', '100'],
      ['1E+2', '100'],
      ['1.5e-3', '0.0015'],
      ['2.50e1', '25.0'],
      ['-0', '0'],
      ['-0.0', '0.0'],
      ['0', '0'],
      ['-12.30e-1', '-1.230'],
      ['12345678901234567890123', '12345678901234567890123'],
    ];
    for (const [token, text] of cases) expect(canonicalNumberText(token), token).toBe(text);
  });

  it('keeps doubles where they are exact and JsonNumber where not; top-level null is JSON_NULL', () => {
    expect(parseJsonExact('[1.5, 2, 0.1]')).toEqual([1.5, 2, 0.1]);
    const v = parseJsonExact('{"a": 1.0, "b": 9007199254740993, "c": null}') as Record<string, unknown>;
    expect(v.a).toEqual(new JsonNumber('1.0'));
    expect(v.b).toEqual(new JsonNumber('9007199254740993'));
    expect(v.c).toBeNull();
    expect(parseJsonExact('null')).toBe(JSON_NULL);
    expect(parseJsonExact(' 5 ')).toBe(5);
  });

  it('refuses what JSON.parse refuses', () => {
    for (const bad of ['01', '[1.]', '1.5.3', '{"a":1', '"\u0001"', '[1,]', '.5', '+1', 'nul', '"\\x"']) {
      expect(() => parseJsonExact(bad), bad).toThrow(SyntaxError);
    }
    expect(() => parseJsonExact('1e1000000000')).toThrow(RangeError);
  });

  it('stringifyJson writes exact texts; a plain JSON.stringify sees doubles; strings cannot forge a number', () => {
    const v = parseJsonExact('{"a": [1.0, 12345678901234567890123], "s": "\\u0001jn\\u00011.0"}');
    expect(stringifyJson(v)).toBe('{"a":[1.0,12345678901234567890123],"s":"\\u0001jn\\u00011.0"}');
    expect(JSON.stringify(v)).toBe('{"a":[1,1.2345678901234568e+22],"s":"\\u0001jn\\u00011.0"}');
    expect(stringifyJson({ doc: JSON_NULL })).toBe('{"doc":null}');
    expect(parseJsonExact(stringifyJson(v))).toEqual(v);
  });
});
