import { describe, expect, it } from 'vitest';
import type { SvcError } from '../../../core/errors.js';
import type { WebhookTransform } from '../../../core/webhook.js';
import type { ChangeEvent } from '../../../sinks/events/change-event.js';
import { TEMPLATE_CALLS_MAX, TEMPLATE_LOOP_ITEMS_MAX } from '../../../sinks/webhooks/template-sandbox.js';
import { compileTransform } from '../../../sinks/webhooks/transform.js';

const EVENT: ChangeEvent = {
  event_id: '01KB0ZQ9W1C6M3V5J7D2A8X4RT',
  timestamp: '2026-11-25T10:00:00.123Z',
  sequence: 4211,
  operation: 'UPDATE',
  database: 'default',
  table: 'orders',
  key: { id: 2 },
  value: { id: 2, item: 'big pear "quoted" <b>', qty: 3, price: '2.00', tags: ['fruit', 'green'], repeat: 'own column' },
  old_value: { id: 2, item: 'pear', qty: 2, price: '2.00', tags: ['fruit'], repeat: null },
  transaction_id: '5b0c2f9e-3c1e-4a8e-9a55-2f0a3b7d9e11',
};

const INSERT: ChangeEvent = { ...EVENT, operation: 'INSERT', old_value: null, sequence: 4212 };

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as SvcError).code;
  }
  return undefined;
}

const text = (def: WebhookTransform | null, event: ChangeEvent = EVENT) => compileTransform(def).apply(event).body.toString('utf8');

describe('no transform', () => {
  it('sends the event as JSON', () => {
    const out = compileTransform(null).apply(EVENT);
    expect(out.contentType).toBe('application/json');
    expect(JSON.parse(out.body.toString('utf8'))).toEqual(EVENT);
    expect(out.body.equals(compileTransform(null).apply(EVENT).body)).toBe(true);
  });

  it('refuses a body past bodyBytesMax with LIMIT_EXCEEDED', () => {
    expect(codeOf(() => compileTransform(null, { bodyBytesMax: 100 }).apply(EVENT))).toBe('LIMIT_EXCEEDED');
  });
});

describe('template transform', () => {
  it('renders every documented variable, without HTML escaping', () => {
    const template =
      '{"op":"{{ operation }}","t":"{{ table }}","k":{{ key | dump }},"v":{{ value | dump }},"o":{{ old_value | dump }},' +
      '"id":"{{ event_id }}","seq":{{ sequence }},"ts":"{{ timestamp }}","db":"{{ database }}","tx":"{{ transaction_id }}","whole":{{ event | dump }}}';
    const out = JSON.parse(text({ template }));
    expect(out).toEqual({
      op: 'UPDATE',
      t: 'orders',
      k: EVENT.key,
      v: EVENT.value,
      o: EVENT.old_value,
      id: EVENT.event_id,
      seq: 4211,
      ts: EVENT.timestamp,
      db: 'default',
      tx: EVENT.transaction_id,
      whole: EVENT,
    });
  });

  it('supports conditions, loops and filters; null old_value of an INSERT is harmless', () => {
    const template =
      '{"changed":[{% for k, v in value %}{% if old_value and old_value[k] != v %}"{{ k }}",{% endif %}{% endfor %}null],' +
      '"tags":"{{ value.tags | join(",") | upper }}","was":{{ (old_value.qty if old_value else 0) }}}';
    expect(JSON.parse(text({ template }))).toEqual({ changed: ['item', 'qty', 'tags', 'repeat', null], tags: 'FRUIT,GREEN', was: 2 });
    expect(JSON.parse(text({ template }, INSERT))).toEqual({ changed: [null], tags: 'FRUIT,GREEN', was: 0 });
  });

  it('the built-in filters are available', () => {
    const template =
      '{{ value.nope | default("none") }} {{ value.nope | d("-") }} {{ value.item | title | truncate(8, true, "") }} ' +
      '{{ value.tags | length }} {{ value.tags | sort(true) | first }} {{ value.qty | float | round(1) }} {{ "a<b" | e }} {{ value | dictsort | length }}';
    expect(text({ template, content_type: 'text/plain' })).toBe('none - Big Pear 2 green 3 a&lt;b 6');
  });

  it('content_type: default application/json (output must be JSON); any other type is sent as given', () => {
    expect(compileTransform({ template: '{}' }).apply(EVENT).contentType).toBe('application/json');
    const plain = compileTransform({ template: '{{ operation }} on {{ table }}: {{ value.item }}', content_type: 'text/plain; charset=utf-8' }).apply(EVENT);
    expect(plain).toEqual({ body: Buffer.from('UPDATE on orders: big pear "quoted" <b>'), contentType: 'text/plain; charset=utf-8' });
    expect(compileTransform({ template: '<x>{{ value.qty }}</x>', content_type: 'application/xml' }).apply(EVENT).body.toString()).toBe('<x>3</x>');
  });

  it('JSON content types refuse output that is not JSON, at apply (the event is dead-lettered)', () => {
    const t = compileTransform({ template: '{"item": "{{ value.item }}"}' });
    expect(codeOf(() => t.apply(EVENT))).toBe('VALIDATION_ERROR');
    expect(codeOf(() => compileTransform({ template: 'x', content_type: 'application/cloudevents+json' }).apply(EVENT))).toBe('VALIDATION_ERROR');
    expect(() => t.apply(EVENT)).toThrow(expect.objectContaining({ details: expect.objectContaining({ event_id: EVENT.event_id }) }));
  });

  it.each([
    ['{{ value.id', /does not parse/],
    ['{% for x in value %}', /does not parse/],
    ['{% if %}{% endif %}', /does not parse/],
    ['{{ x | nosuchfilter }}', /unknown filter nosuchfilter/],
  ])('refuses a template that does not parse: %j', (template, message) => {
    expect(() => compileTransform({ template })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(message) }));
  });

  it.each([['text/plain\r\nX-Injected: 1'], ['not a type'], [''], ['a/b; x']])('refuses content_type %j', (content_type) => {
    expect(codeOf(() => compileTransform({ template: 'x', content_type }))).toBe('VALIDATION_ERROR');
  });

  it('refuses a template text past the size limit, and a definition with both kinds or neither', () => {
    expect(codeOf(() => compileTransform({ template: 'x'.repeat(65_537) }))).toBe('VALIDATION_ERROR');
    expect(codeOf(() => compileTransform({ template: 'x', jsonpath: { a: '$.table' } } as never))).toBe('VALIDATION_ERROR');
    expect(codeOf(() => compileTransform({} as never))).toBe('VALIDATION_ERROR');
  });

  it('the same event always gives the same bytes', () => {
    const t = compileTransform({ template: '{"c": {{ cycler("a","b").next() | dump }}, "v": {{ value | dump }}}' });
    expect(t.apply(EVENT).body.equals(t.apply(EVENT).body)).toBe(true);
  });
});

describe('template sandbox', () => {
  it.each([
    '{{ range.constructor("return process")() }}',
    '{{ constructor.constructor("return process")() }}',
    '{{ cycler.__proto__ }}',
    '{{ joiner["constructor"] }}',
    '{{ value.__lookupGetter__("__proto__") }}',
    '{% set constructor = 1 %}',
  ])('refuses %j at compile time', (template) => {
    expect(() => compileTransform({ template, content_type: 'text/plain' })).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/not allowed/) }),
    );
  });

  it.each([
    '{% set f = range %}{{ f["constr" + "uctor"]("return process.pid")() }}',
    '{% set n = "constr" + "uctor" %}{{ range[n][n]("return process.pid")() }}',
    '{{ "x"[["constr", "uctor"] | join]("return 1")() }}',
    '{{ range.caller }}{{ value[("__pro" ~ "to__")][("constr" ~ "uctor")] }}',
  ])('computed names reach nothing at run time: %j', (template) => {
    const t = compileTransform({ template, content_type: 'text/plain' });
    let rendered = '';
    try {
      rendered = t.apply(EVENT).body.toString();
    } catch (err) {
      expect((err as SvcError).code).toBe('VALIDATION_ERROR');
      return;
    }
    expect(rendered).not.toMatch(/^\d+$/);
    expect(rendered).not.toContain(String(process.pid));
    expect(rendered).not.toMatch(/function|\[native code\]/);
  });

  it('own data named like a guarded member is still readable; the string method is not', () => {
    expect(text({ template: '{{ value.repeat }}', content_type: 'text/plain' })).toBe('own column');
    expect(codeOf(() => compileTransform({ template: '{{ "ab".repeat(3) }}', content_type: 'text/plain' }).apply(EVENT))).toBe('VALIDATION_ERROR');
  });

  it('include, import, extends and the random filter are refused', () => {
    for (const template of [
      '{% include "/etc/passwd" %}',
      '{% import "x" as y %}',
      '{% from "x" import y %}',
      '{% extends "base" %}',
      '{{ [1,2] | random }}',
    ]) {
      expect(
        codeOf(() => compileTransform({ template, content_type: 'text/plain' })),
        template,
      ).toBe('VALIDATION_ERROR');
    }
  });

  it.each([
    ['{% for i in range(100000) %}x{% endfor %}', /range\(\) length/],
    [`{% for i in range(5000) %}{% for j in range(5000) %}x{% endfor %}{% endfor %}`, new RegExp(`more than ${TEMPLATE_LOOP_ITEMS_MAX} loop items`)],
    ['{% macro f(n) %}{% if n > 0 %}{{ f(n-1) }}{{ f(n-1) }}{% endif %}{% endmacro %}{{ f(40) }}', new RegExp(`more than ${TEMPLATE_CALLS_MAX} calls`)],
    ['{{ "x" | indent(100000000) }}', /indent width/],
    ['{{ [1] | batch(100000000, 0) | dump }}', /batch width/],
  ])('a runaway template stops at its budget with LIMIT_EXCEEDED: %j', (template, message) => {
    const t = compileTransform({ template, content_type: 'text/plain' });
    expect(() => t.apply(EVENT)).toThrow(expect.objectContaining({ code: 'LIMIT_EXCEEDED', message: expect.stringMatching(message) }));
    // The budget is per render: a small template still renders afterwards.
    expect(text({ template: '{% for i in range(3) %}{{ i }}{% endfor %}', content_type: 'text/plain' })).toBe('012');
  });

  it('a template output past bodyBytesMax is LIMIT_EXCEEDED', () => {
    const t = compileTransform({ template: '{% for i in range(200) %}{{ value | dump }}{% endfor %}', content_type: 'text/plain' }, { bodyBytesMax: 4096 });
    expect(codeOf(() => t.apply(EVENT))).toBe('LIMIT_EXCEEDED');
  });
});

describe('jsonpath transform', () => {
  it('maps output fields to JSONPaths over the event: none → null, one → the value, several → an array', () => {
    const t = compileTransform({
      jsonpath: {
        id: '$.key.id',
        op: '$.operation',
        item: '$.value.item',
        tags: '$.value.tags',
        first_tag: '$.value.tags[0]',
        each_tag: '$.value.tags[*]',
        ids: '$..id',
        missing: '$.value.nope',
        big: '$.value[?(@ > 2)]',
        before: '$.old_value.qty',
      },
    });
    const out = t.apply(EVENT);
    expect(out.contentType).toBe('application/json');
    expect(JSON.parse(out.body.toString('utf8'))).toEqual({
      id: 2,
      op: 'UPDATE',
      item: EVENT.value!.item,
      tags: ['fruit', 'green'],
      first_tag: 'fruit',
      each_tag: ['fruit', 'green'],
      ids: [2, 2, 2],
      missing: null,
      big: 3,
      before: 2,
    });
    expect(JSON.parse(t.apply(INSERT).body.toString('utf8'))).toMatchObject({ before: null, ids: [2, 2] });
  });

  it('a field named __proto__ is an ordinary output field', () => {
    expect(JSON.parse(text({ jsonpath: JSON.parse('{"__proto__":"$.table"}') as Record<string, string> }))).toEqual(JSON.parse('{"__proto__":"orders"}'));
  });

  it('a filter that throws on an element counts as no match', () => {
    expect(JSON.parse(text({ jsonpath: { x: '$.value.tags[?(@.nope.deeper > 1)]' } }))).toEqual({ x: null });
  });

  it.each([
    [{ a: '$[?(@.x >)]' }],
    [{ a: '$.value[?(@ > )]' }],
    [{ a: 'value.id' }],
    [{ a: '' }],
    [{ '': '$.table' }],
    [{}],
    [{ a: 12 }],
    [Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, '$.table']))],
  ])('refuses %j with VALIDATION_ERROR', (jsonpath) => {
    expect(codeOf(() => compileTransform({ jsonpath } as never))).toBe('VALIDATION_ERROR');
  });

  it('filters run in the safe evaluator: no route to Node', () => {
    const t = compileTransform({ jsonpath: { x: '$.value[?(@.constructor.constructor("return process")().exit())]' } });
    expect(JSON.parse(t.apply(EVENT).body.toString('utf8'))).toEqual({ x: null });
  });
});
