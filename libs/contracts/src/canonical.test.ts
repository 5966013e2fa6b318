import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentHash, itemHash, sha256Hex, stripVolatile, VOLATILE_REQUEST_FIELDS } from './index.js';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units at every depth, with no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('orders the RFC 8785 §3.2.3 sample keys as the RFC does (surrogate pairs sort by code unit)', () => {
    const v = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    expect(canonicalJson(v)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('normalises numbers to the shortest ECMAScript form (1.0, 1e0 and 1 are the same; exponents as JS prints them)', () => {
    expect(canonicalJson(JSON.parse('{"a":1.0,"b":1e0,"c":1.50,"d":1E21,"e":0.000001,"f":1E-7,"g":-0,"h":100}'))).toBe(
      '{"a":1,"b":1,"c":1.5,"d":1e+21,"e":0.000001,"f":1e-7,"g":0,"h":100}',
    );
  });

  it('rejects non-finite numbers anywhere, naming where', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite number at \$\.a/);
    expect(() => canonicalJson([1, { b: Number.POSITIVE_INFINITY }])).toThrow(/non-finite number at \$\[1\]\.b/);
    expect(() => canonicalJson({ x: { ok: [0, 1], y: [{}, Number.NaN] } })).toThrow(
      /non-finite number at \$\.x\.y\[1\]/,
    );
    expect(() => canonicalJson(Number.NEGATIVE_INFINITY)).toThrow(TypeError);
  });

  it('drops undefined members like JSON.stringify and escapes strings minimally', () => {
    expect(canonicalJson({ a: undefined, b: 'line\nbreak "q" \u00e9' })).toBe('{"b":"line\\nbreak \\"q\\" \u00e9"}');
  });

  it('sha256Hex hashes strings as UTF-8 and bytes as given', () => {
    const text = 'farmer’s market é 😀';
    expect(sha256Hex(text)).toBe(createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex'));
    expect(sha256Hex(Buffer.from([0, 255, 128]))).toBe(
      createHash('sha256')
        .update(Buffer.from([0, 255, 128]))
        .digest('hex'),
    );
  });

  it('contentHash is sha256 of the canonical text', () => {
    expect(contentHash({ b: 2, a: 1 })).toBe(sha('{"a":1,"b":2}'));
  });
});

describe('itemHash', () => {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is 2+2?' }], temperature: 0 };
  const canonical =
    '{"api":"openai.chat","body":{"messages":[{"content":"What is 2+2?","role":"user"}],"model":"gpt-4o-mini","temperature":0},"path":"/v1/chat/completions"}';

  it('is sha256 of canonical {api, body, path} with volatile fields removed', () => {
    expect(itemHash('openai.chat', '/v1/chat/completions', body)).toBe(sha(canonical));
  });

  it('is identical whatever the key order, volatile fields, ids, streaming flags or number spelling', () => {
    const noisy = JSON.parse(
      '{"temperature":0.0,"stream":true,"stream_options":{"include_usage":true},"user":"u-123","metadata":{"trace_id":"abc"},"messages":[{"content":"What is 2+2?","role":"user"}],"store":false,"model":"gpt-4o-mini","service_tier":"auto","n":1,"prompt_cache_key":"k","safety_identifier":"s"}',
    );
    expect(itemHash('openai.chat', '/v1/chat/completions', noisy)).toBe(sha(canonical));
  });

  it('a member named __proto__ is hashed as a member', () => {
    const a = JSON.parse('{"model":"m","__proto__":{"x":1}}') as unknown;
    const b = JSON.parse('{"model":"m","__proto__":{"x":2}}') as unknown;
    expect(itemHash('openai.chat', '/p', a)).not.toBe(itemHash('openai.chat', '/p', b));
    expect(itemHash('openai.chat', '/p', a)).toBe(
      sha('{"api":"openai.chat","body":{"__proto__":{"x":1},"model":"m"},"path":"/p"}'),
    );
  });

  it('changes when anything the model is asked changes', () => {
    const h = itemHash('openai.chat', '/v1/chat/completions', body);
    expect(itemHash('openai.chat', '/v1/chat/completions', { ...body, temperature: 1 })).not.toBe(h);
    expect(itemHash('openai.chat', '/v1/chat/completions', { ...body, model: 'gpt-4o' })).not.toBe(h);
    expect(
      itemHash('openai.chat', '/v1/chat/completions', {
        ...body,
        messages: [{ role: 'user', content: 'What is 2+3?' }],
      }),
    ).not.toBe(h);
    expect(itemHash('openrouter.chat', '/api/v1/chat/completions', body)).not.toBe(h);
  });

  it('documents its volatile list and strips only top-level keys', () => {
    expect(VOLATILE_REQUEST_FIELDS).toEqual(
      expect.arrayContaining(['user', 'metadata', 'stream', 'stream_options', 'store']),
    );
    expect(VOLATILE_REQUEST_FIELDS).not.toContain('messages');
    expect(VOLATILE_REQUEST_FIELDS).not.toContain('model');
    expect(stripVolatile({ user: 'x', messages: [{ user: 'kept' }] })).toEqual({ messages: [{ user: 'kept' }] });
    expect(stripVolatile('text')).toBe('text');
    expect(stripVolatile([1])).toEqual([1]);
  });
});
