import type { Ajv, CodeKeywordDefinition, KeywordCxt, KeywordErrorDefinition } from 'ajv';
import { _, str } from 'ajv';

/**
 * The number of code points of a text as ajv counts them (its runtime/ucs2length.js: a high
 * surrogate followed by a low one is one code point, a lone surrogate one too). Our own copy: ajv
 * exports neither it nor its keyword's error from its public entry, and requiring its dist files
 * by path would fail at start once an upgrade moved them. test/protocols/string-length-keywords.test.ts
 * compares every answer and error with ajv's own keywords, so a change on ajv's side fails there.
 */
export function codePoints(text: string): number {
  const units = text.length;
  let count = 0;
  for (let at = 0; at < units; count++) {
    const unit = text.charCodeAt(at++);
    if (unit >= 0xd800 && unit <= 0xdbff && at < units && (text.charCodeAt(at) & 0xfc00) === 0xdc00) at++;
  }
  return count;
}

/** ajv's error of maxLength/minLength (its vocabularies/validation/limitLength.js), word for word. */
const limitLengthError: KeywordErrorDefinition = {
  message: ({ keyword, schemaCode }) => str`must NOT have ${keyword === 'maxLength' ? 'more' : 'fewer'} than ${schemaCode} characters`,
  params: ({ schemaCode }) => _`{limit: ${schemaCode}}`,
};

/**
 * ajv's `maxLength` and `minLength`, with the same meaning (a length in code points, as JSON
 * Schema says and as ajv counts them) and the same errors, but without counting the code points
 * of the whole text when its UTF-16 length already settles the answer.
 *
 * Why: ajv counts code points (`ucs2length`, one step per character, as codePoints does) over
 * every string it checks against a length, even a 25 KB SQL text under a 1 MiB maxLength, and once more for its
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
  error: limitLengthError,
  before: 'pattern',
  code(cxt: KeywordCxt) {
    const { keyword, data, schemaCode, it } = cxt;
    if (it.opts.unicode === false) {
      cxt.fail$data(keyword === 'maxLength' ? _`${data}.length > ${schemaCode}` : _`${data}.length < ${schemaCode}`);
      return;
    }
    const count = cxt.gen.scopeValue('func', { ref: codePoints });
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
