import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ibanValid, luhnValid, redactJson, redactText } from './redact.js';

const red = (s: string) => redactText(s);

describe('checksums', () => {
  it('Luhn accepts the published network test numbers and rejects a changed digit', () => {
    for (const n of ['4111111111111111', '5555555555554444', '378282246310005', '6011111111111117', '3530111333300000'])
      expect(luhnValid(n)).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(luhnValid('')).toBe(false);
  });

  it('IBAN mod-97 accepts the ISO 13616 examples and rejects a changed digit', () => {
    expect(ibanValid('GB82 WEST 1234 5698 7654 32')).toBe(true);
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('FR1420041010050500013M02606')).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false);
  });
});

describe('redactText', () => {
  it('replaces emails with <EMAIL>', () => {
    const r = red('write to jane.doe+tag@mail.example.co.uk today');
    expect(r.value).toBe('write to <EMAIL> today');
    expect(r.counts.get('EMAIL')).toBe(1);
    expect(r.uncertain).toBe(false);
  });

  it('replaces Luhn-valid card numbers, grouped or bare, with <CARD>', () => {
    expect(red('card 4111 1111 1111 1111 exp 12/29').value).toBe('card <CARD> exp 12/29');
    expect(red('amex 3782-822463-10005.').value).toBe('amex <CARD>.');
    expect(red('mc 5555555555554444').value).toBe('mc <CARD>');
  });

  it('marks a grouped card-shaped number that fails Luhn as uncertain, and leaves bare non-card digit runs alone', () => {
    const r = red('card 4111 1111 1111 1112');
    expect(r.uncertain).toBe(true);
    expect(r.uncertainReasons).toEqual(['card_luhn']);
    // a millisecond timestamp and an order id: no card prefix / no grouping → untouched, certain
    const t = red('at 1732960000000 order 41111111111111112');
    expect(t.value).toBe('at 1732960000000 order 41111111111111112');
    expect(t.uncertain).toBe(false);
  });

  it('replaces valid IBANs with <IBAN>; a registered-length IBAN failing mod-97 is uncertain', () => {
    expect(red('pay GB82 WEST 1234 5698 7654 32 now').value).toBe('pay <IBAN> now');
    expect(red('iban DE89370400440532013000').value).toBe('iban <IBAN>');
    expect(red('pay GB82 WEST 1234 5698 7654 33').uncertain).toBe(true);
  });

  it('replaces US SSNs in the valid ranges and UK NI numbers with <NATIONAL_ID>; an out-of-range SSN shape is uncertain', () => {
    expect(red('ssn 123-45-6789.').value).toBe('ssn <NATIONAL_ID>.');
    expect(red('NI number AB 12 34 56 C').value).toBe('NI number <NATIONAL_ID>');
    expect(red('ssn 000-12-3456').uncertain).toBe(true);
    expect(red('ssn 666-12-3456').uncertain).toBe(true);
  });

  it('replaces E.164 and North-American phone numbers with <PHONE>, not dates or times', () => {
    expect(red('call +1 (415) 555-2671 or +44 20 7946 0958').value).toBe('call <PHONE> or <PHONE>');
    expect(red('call 415-555-2671 or (415) 555-2671').value).toBe('call <PHONE> or <PHONE>');
    expect(red('on 2024-11-30 at 10:30:45').value).toBe('on 2024-11-30 at 10:30:45');
  });

  it('replaces IPv4 and IPv6 addresses with <IP>, not impossible quads', () => {
    expect(red('from 192.168.0.1 and 2001:db8::1').value).toBe('from <IP> and <IP>');
    expect(red('from fe80::1ff:fe23:4567:890a.').value).toBe('from <IP>.');
    expect(red('not 999.1.1.1').value).toBe('not 999.1.1.1');
  });

  it('replaces API keys and bearer tokens with <API_KEY>', () => {
    const s =
      'openai sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12 anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrSt aws AKIAIOSFODNN7EXAMPLE hdr Bearer abc.def-ghi_jklmnop gh ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const r = red(s);
    expect(r.value).toBe('openai <API_KEY> anthropic <API_KEY> aws <API_KEY> hdr <API_KEY> gh <API_KEY>');
    expect(r.counts.get('API_KEY')).toBe(5);
  });
});

describe('redactJson', () => {
  it('redacts every string value in nested objects and arrays, returns counts, and leaves the input unchanged', () => {
    const input = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'me@x.io and you@y.io' }] }],
      n: 1,
      ok: true,
      none: null,
    };
    const copy = structuredClone(input);
    const r = redactJson(input);
    expect(r.value).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: '<EMAIL> and <EMAIL>' }] }],
      n: 1,
      ok: true,
      none: null,
    });
    expect(r.counts.get('EMAIL')).toBe(2);
    expect(input).toEqual(copy);
  });

  it('returns the same object when nothing matched', () => {
    const input = { model: 'm', messages: [{ role: 'user', content: 'What is 2+2?' }] };
    expect(redactJson(input).value).toBe(input);
  });

  it('keeps key order, unchanged siblings by reference, and a "__proto__" member as a member', () => {
    const input = JSON.parse(
      '{"a":{"k":1},"__proto__":{"x":"call +44 20 7946 0958"},"b":["same",{"c":2}],"z":"mail me@x.io"}',
    ) as Record<string, unknown>;
    const r = redactJson(input);
    const out = r.value as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['a', '__proto__', 'b', 'z']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe(
      '{"a":{"k":1},"__proto__":{"x":"call <PHONE>"},"b":["same",{"c":2}],"z":"mail <EMAIL>"}',
    );
    expect(out['a']).toBe(input['a']);
    expect(out['b']).toBe(input['b']);
    const arr = redactJson(['x', 'y', 'card 4111 1111 1111 1111', 'z']).value;
    expect(arr).toEqual(['x', 'y', 'card <CARD>', 'z']);
  });

  it('a string with digits but no PII goes through unchanged; one PII among them is still found', () => {
    const plain = 'She sells 16 - 3 - 4 = 9 eggs for $2 each, 18.50 a day, on 2024-05-01 at 10:30, order 12345678.';
    expect(red(plain).value).toBe(plain);
    expect(red(`${plain} SSN 123-45-6789`).value).toBe(`${plain} SSN <NATIONAL_ID>`);
    expect(red(`key sk-${'a'.repeat(24)} and ${plain}`).value).toBe(`key <API_KEY> and ${plain}`);
  });

  it('PII in an object key makes the item uncertain (keys are never renamed)', () => {
    const r = redactJson({ metadata: { 'bob@example.com': 'x' } });
    expect(r.uncertain).toBe(true);
    expect(r.uncertainReasons).toContain('pii_in_key');
  });

  it('passes every GSM8K test question and MT-Bench prompt without uncertainty', () => {
    const gsm = readFileSync(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { question: string }).question);
    const mt = readFileSync(new URL('../../../examples/data/mt-bench-questions.jsonl', import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as unknown);
    expect(gsm.length).toBeGreaterThan(1000);
    const r = redactJson({ gsm, mt });
    expect(r.uncertainReasons).toEqual([]);
  });
});
