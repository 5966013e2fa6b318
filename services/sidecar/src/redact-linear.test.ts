import fc from 'fast-check';
import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import { redactText as backtrackingRedact } from '../test/redact-backtracking-reference.js';
import {
  applyNamedRule,
  BOUNDED_V8_PATTERNS,
  normaliseFieldName,
  redactJson,
  redactText,
  REDACTION_RULES,
  V8_MAX_REPEAT,
} from './redact.js';

// Characters that make up the rules' shapes: digits, separators, key prefixes, '@', ':' and '.'.
const ALPHABET = [...'0123456789  -.:@+()abcdefAF'];
const chunks = [
  'sk-',
  'AKIA',
  'ghp_',
  'eyJ',
  'Bearer ',
  '.com',
  '4111',
  '555-',
  '192.168.',
  '::',
  'GB82',
  '+44 ',
  'AB 12 ',
  'x@y',
  'ASIA',
];
const text = fc
  .array(fc.oneof(fc.constantFrom(...ALPHABET), fc.constantFrom(...chunks)), { maxLength: 60 })
  .map((a) => a.join(''));

describe('the linear-time redactor', () => {
  it('every rule is an RE2JS pattern (automata: time linear in the input, no backtracking) or a V8 pattern bounded by construction', () => {
    expect(REDACTION_RULES.length).toBeGreaterThan(20);
    for (const r of REDACTION_RULES) expect(r.re).toBeInstanceOf(RE2JS);
    expect(BOUNDED_V8_PATTERNS.length).toBe(9);
    for (const { name, re } of BOUNDED_V8_PATTERNS)
      expect({ name, ...boundedByConstruction(re.source) }).toEqual({
        name,
        unbounded: 0,
        longestRepeat: expect.any(Number),
        longLookaround: 0,
      });
    for (const { re } of BOUNDED_V8_PATTERNS)
      expect(boundedByConstruction(re.source).longestRepeat).toBeLessThanOrEqual(V8_MAX_REPEAT);
  });

  it('the secret-name rules matched on V8 find exactly what their RE2JS patterns find', () => {
    const fast = REDACTION_RULES.filter((r) => r.find !== undefined);
    expect(fast.map((r) => r.name).sort()).toEqual(['secret_kv', 'secret_kv_scheme', 'secret_quoted']);
    const parts = [
      ...'  \t\n\r\f\v\u00a0:=\'"",;&<>ab1-_.',
      'password',
      'PassPhrase',
      'API_KEY',
      'api key',
      'secret',
      'Secret-Key',
      'client secret',
      'credential',
      'credentials',
      'token',
      'TOKEN',
      'authorization',
      'bearer ',
      'Basic ',
      'digest\t',
      ' is ',
      'IS',
      'ſecret', // U+017F folds to s under RE2's (?i)
      'K', // U+212A folds to k
      'abc',
      'x\u{1F600}y',
    ];
    const shaped = fc.array(fc.constantFrom(...parts), { maxLength: 24 }).map((a) => a.join(''));
    const finds = (m: { find(p: number): boolean; start(g: number): number; end(g: number): number }, s: string) => {
      const out: [number, number, number][] = [];
      let pos = 0;
      while (pos <= s.length && m.find(pos)) {
        out.push([m.start(0), m.start(1), m.end(1)]);
        pos = m.end(1) > pos ? m.end(1) : pos + 1;
      }
      return out;
    };
    fc.assert(
      fc.property(shaped, (s) => {
        for (const r of fast) expect([r.name, finds(r.find!(s), s)]).toEqual([r.name, finds(r.re.matcher(s), s)]);
      }),
      { numRuns: 3000, seed: 15 },
    );
  });

  it('the structural check catches the patterns that backtracked', () => {
    expect(boundedByConstruction('[a-z]+@x').unbounded).toBe(1);
    expect(boundedByConstruction('eyJ[A-Za-z0-9_-]{8,}\\.').unbounded).toBe(1);
    expect(boundedByConstruction('(?:a|b)*c').unbounded).toBe(1);
    expect(boundedByConstruction('[+*]\\+x{2,3}').unbounded).toBe(0);
    expect(boundedByConstruction('(?<![\\w.]{2})x').longLookaround).toBeGreaterThan(0);
  });

  it('redacts exactly as the former backtracking patterns did, on strings made of their shapes', () => {
    fc.assert(
      fc.property(text, (s) => {
        const a = redactText(s);
        const b = backtrackingRedact(s);
        expect(a.value).toBe(b.value);
        expect(a.uncertainReasons).toEqual(b.uncertainReasons);
        expect([...a.counts.entries()].sort()).toEqual([...b.counts.entries()].sort());
      }),
      { numRuns: 3000, seed: 18 },
    );
  });

  it('the inputs that made the old email and JWT patterns quadratic are scanned in one pass each', () => {
    // 40k characters took 1.8 s on the backtracking email pattern; here it is a single linear scan
    const s = 'a'.repeat(40_000) + '@';
    expect(applyNamedRule('email', s)).toBe(s);
    const j = 'eyJ'.repeat(10_000);
    expect(redactText(j).value).toBe(j);
  });

  it('a deadline stops redaction between strings and reports over budget, never a partial value as done', () => {
    const body = {
      messages: Array.from({ length: 200 }, (_, i) => ({
        role: 'user',
        content: `call +1 415 555 ${String(1000 + i)} ` + 'x'.repeat(1000),
      })),
    };
    const r = redactJson(body, { deadline: performance.now() - 1 });
    expect(r.overBudget).toBe(true);
    expect(r.uncertain).toBe(true);
    expect(redactJson(body).overBudget).toBe(false);
  });
});

describe('secrets by field name and inside strings', () => {
  it('normalises names: case and -_ . ignored', () => {
    expect(normaliseFieldName('X-Api_Key')).toBe('xapikey');
    expect(normaliseFieldName('client.Secret')).toBe('clientsecret');
  });

  it('replaces values under secret member names, in any case or separator, at any depth; not max_tokens', () => {
    const body = {
      model: 'm',
      max_tokens: 100,
      metadata: {
        api_key: 'abc123def',
        'API-KEY': 'x1',
        Password: 'hunter2',
        client_secret: 'cs',
        'private.key': 'k',
        openai_api_key: 'sk',
        pin: 1234,
      },
      tools: [{ auth: { token: 'tok', type: 'bearer' } }],
      authorization: 'Basic dXNlcjpwYXNz',
      list: { secrets: ['a', 'b'] },
    };
    const r = redactJson(body);
    expect(r.value).toEqual({
      model: 'm',
      max_tokens: 100,
      metadata: {
        api_key: '<SECRET>',
        'API-KEY': '<SECRET>',
        Password: '<SECRET>',
        client_secret: '<SECRET>',
        'private.key': '<SECRET>',
        openai_api_key: '<SECRET>',
        pin: '<SECRET>',
      },
      tools: [{ auth: { token: '<SECRET>', type: 'bearer' } }],
      authorization: '<SECRET>',
      list: { secrets: ['a', 'b'] },
    });
    expect(r.counts.get('SECRET')).toBe(9);
  });

  it('extra secret names are configurable', () => {
    const r = redactJson({ tenant_passcode: '1234abcd', other: 'x' }, { secretFieldNames: ['Pass-Code'] });
    expect(r.value).toEqual({ tenant_passcode: '<SECRET>', other: 'x' });
  });

  it('finds key=value secrets, Basic credentials, URL userinfo and PEM blocks inside any string', () => {
    expect(redactText('config: password=hunter22 user=bob').value).toBe('config: password=<SECRET> user=bob');
    expect(redactText('{"api_key": "abcdef123456", "n": 2}').value).toBe('{"api_key": "<SECRET>", "n": 2}');
    expect(redactText('client-secret: s3cr3tValue;').value).toBe('client-secret: <SECRET>;');
    expect(redactText('Authorization: Basic dXNlcjpwYXNzd29yZA==').value).toBe('Authorization: Basic <SECRET>');
    expect(redactText('send Basic dXNlcjpwYXNzd29yZA== now').value).toBe('send Basic <CREDENTIALS> now');
    expect(redactText('he did basic training').value).toBe('he did basic training');
    expect(redactText('db at postgres://admin:pa55w0rd@db.internal:5432/x').value).toBe(
      'db at postgres://<CREDENTIALS>@db.internal:5432/x',
    );
    const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----';
    expect(redactText(`key:\n${pem}\nthanks`).value).toBe('key:\n<PRIVATE_KEY>\nthanks');
    expect(redactText('-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B (truncated').value).toBe('<PRIVATE_KEY>');
    expect(redactText('my tokens: 500').value).toBe('my tokens: 500');
  });
});

describe('the quick exit', () => {
  it('lets through every string some rule matches (letters-only AWS ids and Stripe keys included)', () => {
    expect(redactText('id AKIAIOSFODNNEXAMPLEX').value).toBe('id <API_KEY>');
    expect(redactText('key sk_live_abcdefghijklmnopqrstuv').value).toBe('key <API_KEY>');
  });
});

/**
 * Counts what could make a V8 pattern backtrack without bound: quantifiers `*`, `+`, `{n,}` (outside
 * character classes and escapes), repetition counts, and look-arounds spanning more than one
 * character (a look-around here must be a single class or escape, optionally alternated).
 */
function boundedByConstruction(src: string): { unbounded: number; longestRepeat: number; longLookaround: number } {
  let unbounded = 0;
  let longestRepeat = 0;
  let longLookaround = 0;
  let i = 0;
  const skipAtom = (j: number): number => {
    if (src[j] === '\\') return j + 2;
    if (src[j] === '[') {
      let k = j + 1;
      while (k < src.length && src[k] !== ']') k += src[k] === '\\' ? 2 : 1;
      return k + 1;
    }
    return j + 1;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\' || c === '[') {
      i = skipAtom(i);
      continue;
    }
    if (c === '(' && /^\(\?<?[=!]/.test(src.slice(i))) {
      // look-around: its body must be atoms of one character each, between alternations
      let k =
        src.indexOf(src[i + 2] === '<' ? src.slice(i, i + 4) : src.slice(i, i + 3), i) + (src[i + 2] === '<' ? 4 : 3);
      let width = 0;
      let depth = 0;
      while (k < src.length && !(src[k] === ')' && depth === 0)) {
        if (src[k] === '|') {
          longLookaround += width > 2 ? 1 : 0;
          width = 0;
          k++;
          continue;
        }
        if (src[k] === '(') depth++;
        if (src[k] === ')') depth--;
        if (src[k] === '{' || src[k] === '*' || src[k] === '+') longLookaround++;
        width++;
        k = src[k] === '(' || src[k] === ')' ? k + 1 : skipAtom(k);
      }
      if (width > 2) longLookaround++;
      i = k + 1;
      continue;
    }
    if (c === '*' || c === '+') unbounded++;
    if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
      if (m) {
        if (m[2] !== undefined && m[3] === '') unbounded++;
        else longestRepeat = Math.max(longestRepeat, Number(m[3] ?? m[1]));
        i += m[0].length;
        continue;
      }
    }
    i++;
  }
  return { unbounded, longestRepeat, longLookaround };
}
