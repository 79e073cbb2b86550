import { Ajv, type AnySchemaObject, type ValidateFunction } from 'ajv';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { codePoints, fastStringLength } from '../../protocols/http/string-length-keywords.js';
import { sqlBodySchema } from '../../protocols/http/query/sql-body-schema.js';

// The options request-validators.ts gives fastify's ajv for query strings (with @fastify/ajv-compiler's own defaults);
// bodies get the same without coercion, which these keywords do not read.
const OPTIONS = { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false, addUsedSchema: false, $data: true } as const;

const stockAjv = new Ajv(OPTIONS);
const fastAjv = fastStringLength(new Ajv(OPTIONS));

function pair(schema: AnySchemaObject): { stock: ValidateFunction; fast: ValidateFunction } {
  return { stock: stockAjv.compile(schema), fast: fastAjv.compile(schema) };
}

function answer(validate: ValidateFunction, data: unknown): unknown {
  const valid = validate(data);
  return { valid, errors: validate.errors ?? null };
}

const ASTRAL = '\u{1F600}'; // one code point, two UTF-16 units
const HIGH = '\uD83D'; // a lone high surrogate: one code point, one unit
const LOW = '\uDE00';

/** Texts around `n` code points and `n` UTF-16 units, mixing astral characters and lone surrogates. */
function textsAround(n: number): string[] {
  const texts = [''];
  for (let k = Math.max(0, n - 2); k <= n + 2; k++) {
    texts.push('x'.repeat(k), ASTRAL.repeat(k), 'x'.repeat(k) + HIGH, LOW + 'x'.repeat(k), HIGH + ASTRAL.repeat(k), LOW + HIGH + 'y'.repeat(k));
    for (let astral = 1; astral <= k; astral += Math.max(1, Math.floor(k / 3))) texts.push('x'.repeat(k - astral) + ASTRAL.repeat(astral));
  }
  texts.push(HIGH, LOW, HIGH + LOW, LOW + HIGH);
  return texts;
}

describe('maxLength/minLength counting code points only when the UTF-16 length does not settle it', () => {
  it('answer every text as ajv`s own keywords do: same result, same errors (limits 0 to 9, with pattern after them)', () => {
    for (let n = 0; n <= 9; n++) {
      const schemas: AnySchemaObject[] = [
        { type: 'string', maxLength: n },
        { type: 'string', minLength: n },
        { type: 'string', minLength: n, maxLength: n + 1 },
        { type: 'string', maxLength: n, minLength: n, pattern: '^x' },
        { type: 'object', properties: { s: { type: 'string', maxLength: n, minLength: 1 } } },
      ];
      for (const schema of schemas) {
        const { stock, fast } = pair(schema);
        for (const text of textsAround(n)) {
          const data = schema.type === 'object' ? { s: text } : text;
          expect(answer(fast, data), `${JSON.stringify(schema)} on ${JSON.stringify(text)}`).toEqual(answer(stock, data));
        }
      }
    }
  });

  it('answer $data limits as ajv does, a limit that is not a number included', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', maxLength: { $data: '1/n' }, minLength: { $data: '1/m' } } } };
    const { stock, fast } = pair(schema);
    for (const text of textsAround(3)) {
      for (const [n, m] of [
        [3, 2],
        [4, 4],
        ['x', 1],
        [5, 'y'],
        [undefined, 3],
      ]) {
        const data = { s: text, n, m };
        expect(answer(fast, data), JSON.stringify(data)).toEqual(answer(stock, data));
      }
    }
  });

  it('does not read the characters of an SQL body whose UTF-16 length is within the limit', () => {
    // POST /query's body schema at its default limit, the body of a 1,000-row VALUES statement.
    const schema = sqlBodySchema({ queryTextBytesMax: 1_048_576, resultRowsMax: 100_000, queryTimeoutMsMax: 3_600_000 }, {});
    const { stock, fast } = pair(schema);
    const rows = Array.from({ length: 1000 }, (_, i) => `(${i}, 'name ${i}', ${i * 1.5})`);
    const sql = `INSERT INTO v VALUES ${rows.join(', ')}`;
    const reads = (validate: ValidateFunction): number => {
      // ajv's code point count reads the text with charCodeAt: count the calls while one body is checked.
      const original = String.prototype.charCodeAt;
      let calls = 0;
      String.prototype.charCodeAt = function (this: string, index: number) {
        calls++;
        return original.call(this, index);
      };
      try {
        expect(validate({ sql })).toBe(true);
      } finally {
        String.prototype.charCodeAt = original;
      }
      return calls;
    };
    expect(reads(stock)).toBeGreaterThanOrEqual(2 * sql.length); // maxLength and minLength: 1 each count it
    expect(reads(fast)).toBe(0);
  });

  it('counts an SQL text longer than the limit in UTF-16 units, and refuses it only past the limit in code points', () => {
    const schema = sqlBodySchema({ queryTextBytesMax: 1024, resultRowsMax: 100, queryTimeoutMsMax: 60_000 }, {});
    const { stock, fast } = pair(schema);
    for (const sql of [ASTRAL.repeat(1024), 'x' + ASTRAL.repeat(1023), ASTRAL.repeat(1025), 'x'.repeat(1025), 'xy' + ASTRAL.repeat(1023)]) {
      expect(answer(fast, { sql })).toEqual(answer(stock, { sql }));
    }
    expect(fast({ sql: ASTRAL.repeat(1024) })).toBe(true);
    expect(fast({ sql: 'xy' + ASTRAL.repeat(1023) })).toBe(false);
    expect(fast.errors).toEqual([
      {
        instancePath: '/sql',
        schemaPath: '#/properties/sql/maxLength',
        keyword: 'maxLength',
        params: { limit: 1024 },
        message: 'must NOT have more than 1024 characters',
      },
    ]);
  });

  it('counts code points as ajv does, through ajv`s public entry only (an upgrade moving its dist files cannot fail the start)', () => {
    for (let n = 0; n <= 4; n++) for (const text of textsAround(n)) expect(codePoints(text), JSON.stringify(text)).toBe([...text].length);
    const source = readFileSync(new URL('../../protocols/http/string-length-keywords.ts', import.meta.url), 'utf8');
    expect(source.match(/from '[^']*'|require\w*\([^)]*\)/g)).toEqual(["from 'ajv'", "from 'ajv'"]);
  });
});
