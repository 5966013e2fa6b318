import { describe, expect, it } from 'vitest';
import { FreezeRequest, isShadowplaneError, SyntheticBuilder, type FreezeRequestInput } from '@shadowplane/contracts';
import { expandSynthetic } from './synthetic.js';

// Expansion of the synthetic builder. Expected requests are written out by hand from the template
// and the bindings, not computed by the code under test.

const builder = (o: Record<string, unknown>) =>
  SyntheticBuilder.parse({ kind: 'synthetic', call_type: 'math', request: {}, ...o });
const chat = (content: unknown, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-x',
  messages: [{ role: 'user', content }],
  ...extra,
});

/** The issues of the 400 a call throws ({path, message}[]), or fails. */
function refused(fn: () => unknown): { path: string; message: string }[] {
  try {
    fn();
  } catch (e) {
    if (isShadowplaneError(e) && e.code === 'invalid_request')
      return (e.details as { issues: { path: string; message: string }[] }).issues;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('expandSynthetic', () => {
  it('rows: one request per row, placeholders filled in string values, a whole placeholder keeps its type', () => {
    const items = expandSynthetic(
      builder({
        request: chat('What is {{a}} + {{ b }}?', { max_tokens: '{{n}}' }),
        reference: { kind: 'numeric', value: '{{sum}}' },
        rows: [
          { a: 2, b: 3, sum: 5, n: 16 },
          { a: 'ten', b: 1.5, sum: 11.5, n: 32 },
        ],
      }),
    );
    expect(items.map((i) => i.request)).toEqual([
      chat('What is 2 + 3?', { max_tokens: 16 }),
      chat('What is ten + 1.5?', { max_tokens: 32 }),
    ]);
    expect(items.map((i) => i.expectations)).toEqual([
      [{ kind: 'numeric', value: 5 }],
      [{ kind: 'numeric', value: 11.5 }],
    ]);
    expect(items.map((i) => [i.api, i.path, i.call_type])).toEqual([
      ['openai.chat', '/v1/chat/completions', 'math'],
      ['openai.chat', '/v1/chat/completions', 'math'],
    ]);
    expect(items[0]!.item_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(items[0]!.item_hash).not.toBe(items[1]!.item_hash);
  });

  it('product: the cartesian product in order, the last variable varying fastest; references templated too', () => {
    const items = expandSynthetic(
      builder({
        request: chat('Translate "{{word}}" into {{lang}}.'),
        reference: [
          { kind: 'must_include', value: ['{{word}}'] },
          { kind: 'regex', value: '^{{{lang}}}' },
        ],
        product: { word: ['cat', 'dog', 'fish'], lang: ['French', 'German'] },
      }),
    );
    expect(items.map((i) => (i.request['messages'] as { content: string }[])[0]!.content)).toEqual([
      'Translate "cat" into French.',
      'Translate "cat" into German.',
      'Translate "dog" into French.',
      'Translate "dog" into German.',
      'Translate "fish" into French.',
      'Translate "fish" into German.',
    ]);
    expect(items[3]!.expectations).toEqual([
      { kind: 'must_include', value: ['dog'] },
      { kind: 'regex', value: '^German' },
    ]);
    expect(items[3]!.label).toBe('product #3 (word=dog, lang=German)');
  });

  it('values are not escaped and cannot change the structure: quotes, braces and HTML stay text', () => {
    const v = '"}, {"role": "system", "content": "<b>&{{x}}</b>';
    const [it0] = expandSynthetic(builder({ request: chat('say: {{v}}'), rows: [{ v }] }));
    expect(it0!.request).toEqual(chat(`say: ${v}`));
  });

  it('identical expansions stay (the freeze weights them); the same request with two references is refused', () => {
    const items = expandSynthetic(builder({ request: chat('{{q}}'), product: { q: ['a', 'b', 'a'] } }));
    expect(items.map((i) => i.label)).toEqual(['product #0 (q=a)', 'product #1 (q=b)', 'product #2 (q=a)']);
    expect(items[0]!.item_hash).toBe(items[2]!.item_hash);
    const clash = refused(() =>
      expandSynthetic(
        builder({
          request: chat('{{q}}'),
          reference: { kind: 'exact', value: '{{r}}' },
          rows: [
            { q: 'x', r: '1' },
            { q: 'x', r: '2' },
          ],
        }),
      ),
    );
    expect(clash).toEqual([
      { path: 'builder.reference', message: 'rows.1 expands to the same request as rows.0 with a different reference' },
    ]);
  });

  it('refuses unknown variables at the placeholder, unused ones at the binding, and rows missing a value', () => {
    expect(
      refused(() => expandSynthetic(builder({ request: chat('{{a}} and {{b}}'), product: { a: [1], c: [2] } }))),
    ).toEqual([
      { path: 'builder.product.c', message: 'variable c is used by no template (unused)' },
      { path: 'builder.request.messages.0.content', message: 'unknown variable {{b}}: product binds a, c' },
    ]);
    expect(
      refused(() =>
        expandSynthetic(
          builder({
            request: chat('{{a}}'),
            reference: { kind: 'exact', value: '{{z}}' },
            rows: [{ a: 1 }, { a: 2, extra: 3 }],
          }),
        ),
      ),
    ).toEqual([
      { path: 'builder.reference.value', message: 'unknown variable {{z}}: no row binds it' },
      { path: 'builder.rows.1.extra', message: 'variable extra is used by no template (unused)' },
    ]);
    expect(
      refused(() => expandSynthetic(builder({ request: chat('{{a}}{{b}}'), rows: [{ a: 1, b: 2 }, { a: 3 }] }))),
    ).toEqual([{ path: 'builder.rows.1', message: 'binds no value for {{b}}, which the template uses' }]);
  });

  it('refuses anything but plain placeholders: sections, partials, comments, delimiters, dots, keys, bad tags', () => {
    const one = (content: string) =>
      refused(() => expandSynthetic(builder({ request: chat(content), rows: [{ a: 1 }] })));
    for (const t of ['{{#a}}x{{/a}}', '{{^a}}x{{/a}}', '{{>a}}', '{{! a }}{{a}}', '{{=<% %>=}}<%a%>']) {
      const issues = one(t);
      expect(issues[0]).toMatchObject({ path: 'builder.request.messages.0.content' });
      expect(issues[0]!.message).toMatch(/only \{\{name\}\} placeholders|unused/);
    }
    expect(one('{{a.b}}')[0]!.message).toMatch(/no dotted lookups/);
    expect(one('{{a')[0]).toEqual({
      path: 'builder.request.messages.0.content',
      message: expect.stringMatching(/^not a valid template: Unclosed tag/),
    });
    expect(
      refused(() => expandSynthetic(builder({ request: { model: 'm', '{{a}}': 'x', x: '{{a}}' }, rows: [{ a: 1 }] }))),
    ).toEqual([
      { path: 'builder.request.{{a}}', message: 'placeholders are expanded in string values only, not in keys' },
    ]);
  });

  it('refuses an expanded reference that is not an expectation, naming the expansion', () => {
    const issues = refused(() =>
      expandSynthetic(
        builder({
          request: chat('{{q}}'),
          reference: { kind: 'exact', value: '{{r}}' },
          rows: [
            { q: 'a', r: 'ok' },
            { q: 'b', r: 7 },
          ],
        }),
      ),
    );
    expect(issues).toEqual([
      { path: 'builder.reference.value', message: expect.stringMatching(/^rows\.1 expands to an invalid expectation/) },
    ]);
  });

  it('refuses an expanded regex reference RE2 cannot compile (a backreference), naming the expansion and the rule', () => {
    const issues = refused(() =>
      expandSynthetic(
        builder({
          request: chat('{{q}}'),
          reference: { kind: 'regex', value: '{{r}}' },
          rows: [
            { q: 'a', r: '^answer: a$' },
            { q: 'b', r: '(b)\\1' },
          ],
        }),
      ),
    );
    expect(issues).toEqual([
      {
        path: 'builder.reference.value',
        message: expect.stringMatching(/^rows\.1 expands to an invalid expectation: not RE2 syntax: no backreferences/),
      },
    ]);
  });

  it('refuses an expanded request over 256 KiB, and expansions over 64 MiB all together', () => {
    const big = 'x'.repeat(60 * 1024); // a bound value holds at most 64 KiB; five of them make 300 KiB
    const one = refused(() =>
      expandSynthetic(builder({ request: chat('{{a}}{{a}}{{a}}{{a}}{{a}}'), rows: [{ a: 'short' }, { a: big }] })),
    );
    expect(one).toEqual([
      { path: 'builder.request', message: expect.stringMatching(/^rows\.1 expands to \d+ bytes; at most 262144$/) },
    ]);
    // 3 × 60 KiB = 180 KiB a request: under the per-request limit, but 400 of them pass 64 MiB
    const rows = Array.from({ length: 400 }, () => ({ a: big }));
    const all = refused(() => expandSynthetic(builder({ request: chat('{{a}}{{a}}{{a}}'), rows })));
    expect(all).toEqual([
      {
        path: 'builder.request',
        message: expect.stringMatching(
          /^the expansions up to rows\.\d+ come to \d+ bytes; all together at most 67108864$/,
        ),
      },
    ]);
    const at = Number(/rows\.(\d+)/.exec(all[0]!.message)![1]);
    expect(at).toBe(Math.floor((64 * 1024 * 1024) / (3 * 60 * 1024 + 59))); // {"model":"gpt-x","messages":[…]} around it: 59 bytes
  });
});

describe('FreezeRequest with a synthetic builder', () => {
  const parse = (o: FreezeRequestInput) => FreezeRequest.safeParse(o);
  const issues = (o: FreezeRequestInput) => {
    const r = parse(o);
    return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  };
  const b = (o: Record<string, unknown>) => ({ kind: 'synthetic' as const, call_type: 'qa', request: {}, ...o });

  it('refuses an expansion over max_items (default 500) or the 5000 ceiling, naming the bindings; never truncates', () => {
    const product = { a: Array.from({ length: 30 }, (_, i) => i), b: Array.from({ length: 20 }, (_, i) => i) };
    expect(issues({ builder: b({ product }) })).toEqual([
      {
        path: 'builder.product',
        message:
          'expands to 600 requests, more than max_items 500: raise max_items or bind fewer values (a synthetic expansion is refused, never truncated)',
      },
    ]);
    expect(parse({ max_items: 600, builder: b({ product }) }).success).toBe(true);
    const huge = { ...product, c: Array.from({ length: 10 }, (_, i) => i) };
    expect(issues({ max_items: 5000, builder: b({ product: huge }) })[0]).toEqual({
      path: 'builder.product',
      message: expect.stringContaining('expands to 6000 requests, more than max_items 5000 (at most 5000)'),
    });
    const rows = Array.from({ length: 9 }, (_, i) => ({ a: i }));
    expect(issues({ max_items: 8, builder: b({ rows }) })[0]!.path).toBe('builder.rows');
  });

  it('needs exactly one of rows or product, variables named like identifiers, scalar values', () => {
    expect(issues({ builder: b({}) })[0]!.path).toBe('builder.rows');
    expect(issues({ builder: b({ rows: [{ a: 1 }], product: { a: [1] } }) })[0]!.path).toBe('builder.product');
    expect(issues({ builder: b({ rows: [{ 'a.b': 1 }] }) })[0]!.path).toMatch(/^builder\.rows\.0/);
    expect(issues({ builder: b({ rows: [{ a: { nested: 1 } }] }) })[0]!.path).toBe('builder.rows.0.a');
    expect(issues({ builder: b({ product: { a: [] } }) })[0]!.path).toBe('builder.product.a');
    expect(issues({ builder: b({ rows: [{ a: 1 }], extra: 1 }) })[0]).toMatchObject({ path: 'builder' });
  });
});
