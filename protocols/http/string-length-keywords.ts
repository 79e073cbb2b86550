import { createRequire } from 'node:module';
import type { Ajv, CodeKeywordDefinition, KeywordCxt } from 'ajv';
import { _ } from 'ajv';

// ajv's own keyword definition (for its error messages) and its code point count. Both are
// CommonJS modules whose `exports.default` is the value: required, as ESM loaders differ on
// what a default import of such a module is (node gives `exports`, vitest gives `default`).
const requireCjs = createRequire(import.meta.url);
const limitLength = (requireCjs('ajv/dist/vocabularies/validation/limitLength') as typeof import('ajv/dist/vocabularies/validation/limitLength.js')).default;
const ucs2length = (requireCjs('ajv/dist/runtime/ucs2length') as typeof import('ajv/dist/runtime/ucs2length.js')).default;

/**
 * ajv's `maxLength` and `minLength`, with the same meaning (a length in code points, as JSON
 * Schema says and as ajv counts them) and the same errors, but without counting the code points
 * of the whole text when its UTF-16 length already settles the answer.
 *
 * Why: ajv counts code points (`ucs2length`, one step per character) over every string it checks
 * against a length, even a 25 KB SQL text under a 1 MiB maxLength, and once more for its
 * `minLength: 1`: ~75 µs of a warm 1,000-row VALUES statement. A text has at most as many code
 * points as UTF-16 units (an astral character is two units, one code point) and at least half as
 * many, so:
 * - maxLength N: `length <= N` passes without counting; only a longer text is counted.
 * - minLength N: `length < N` fails without counting, `length >= 2N` passes; only between them
 *   (a text shorter than 2N units) is counted.
 * Counting stays exact where it matters: a text of 2N units of astral characters has N code
 * points and passes maxLength N, as it does with ajv's own keyword.
 *
 * ajv's `unicode: false` option would skip the count too, but it changes the meaning (UTF-16
 * units, so that text would be refused) of every length in every route's schema.
 *
 * The schemas are unchanged (the OpenAPI document publishes them as they are): this replaces
 * how ajv's instance compiles the two keywords, in their place among the string keywords (before
 * `pattern`, so a text failing both reports the length first, as before).
 */
const fastLimitLength: CodeKeywordDefinition = {
  keyword: ['maxLength', 'minLength'],
  type: 'string',
  schemaType: 'number',
  $data: true,
  error: limitLength.error,
  before: 'pattern',
  code(cxt: KeywordCxt) {
    const { keyword, data, schemaCode, it } = cxt;
    if (it.opts.unicode === false) {
      cxt.fail$data(keyword === 'maxLength' ? _`${data}.length > ${schemaCode}` : _`${data}.length < ${schemaCode}`);
      return;
    }
    const count = cxt.gen.scopeValue('func', { ref: ucs2length, code: _`require("ajv/dist/runtime/ucs2length").default` });
    cxt.fail$data(
      keyword === 'maxLength'
        ? _`${data}.length > ${schemaCode} && ${count}(${data}) > ${schemaCode}`
        : _`${data}.length < ${schemaCode} || (${data}.length < 2 * ${schemaCode} && ${count}(${data}) < ${schemaCode})`,
    );
  },
};

/** An ajv plugin (fastify's `ajv.plugins`): ajv's own maxLength/minLength out, the same keywords counting only when needed in. */
export function fastStringLength(ajv: Ajv): Ajv {
  ajv.removeKeyword('maxLength');
  ajv.removeKeyword('minLength');
  ajv.addKeyword(fastLimitLength);
  return ajv;
}
