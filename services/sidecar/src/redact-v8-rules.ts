// The rules on V8's engine: patterns bounded by construction (the digit-shaped rules and IPv6).
import { isIPv6 } from 'node:net';
import { bump, type Ctx } from './redact-context.js';
import { hasCardPrefix, IBAN_LENGTHS, ibanValid, luhnValid } from './redact-checksums.js';

/**
 * A rule on V8's engine, allowed only for a pattern bounded by construction: no unbounded
 * quantifier (`*`, `+`, `{n,}`), every repetition at most {@link V8_MAX_REPEAT}, look-arounds of one
 * character, so the work at each start position is bounded by a constant and a scan is linear in
 * the string (tested: `boundedByConstruction`). The digit-shaped rules are of that kind; on RE2JS
 * their bounded repetitions expand into large automata that ran 100–500× slower (about 1 µs per
 * byte on grouped digits).
 */
export interface V8Rule {
  re: RegExp;
  replace: (m: string, ...groups: string[]) => string;
}
export const V8_MAX_REPEAT = 64;
export const IPV6_RE = /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g;

// 2 letters, 2 digits, then 11–30 alnum, optionally in space-separated groups of 4
const IBAN_RE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g;

// 13–19 digits, optionally grouped by single spaces or dashes; not part of a longer digit/word run
const CARD_RE = /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-]|\.\d)/g;

const SSN_RE = /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])/g;
const NINO_RE = /\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g;

const PHONE_E164_RE = /(?<![\w+])\+\d(?:[ ().-]{0,2}\d){7,14}(?!\w)/g;
const PHONE_NANP_RE = /(?<![\w(-])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])/g;

const IPV4_RE = /(?<![\w.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/g;

/** The digit-shaped rules, bounded by construction, on V8 (in the order applied); ctx is bound per call. */
export function digitRules(ctx: Ctx): [string, V8Rule][] {
  return [
    [
      'iban',
      {
        re: IBAN_RE,
        replace: (m) => {
          const compact = m.replace(/ /g, '');
          if (ibanValid(compact)) return bump(ctx, 'IBAN');
          if (IBAN_LENGTHS[compact.slice(0, 2)] === compact.length) ctx.uncertain.push('iban_checksum');
          return m;
        },
      },
    ],
    [
      'ssn',
      {
        re: SSN_RE,
        replace: (m, a, g, sn) => {
          const area = Number(a);
          if (area === 0 || area === 666 || area >= 900 || g === '00' || sn === '0000') {
            ctx.uncertain.push('ssn_range');
            return m;
          }
          return bump(ctx, 'NATIONAL_ID');
        },
      },
    ],
    ['nino', { re: NINO_RE, replace: () => bump(ctx, 'NATIONAL_ID') }],
    [
      'card',
      {
        re: CARD_RE,
        replace: (m) => {
          const digits = m.replace(/[ -]/g, '');
          if (hasCardPrefix(digits)) {
            if (luhnValid(digits)) return bump(ctx, 'CARD');
            if (digits.length !== m.length) ctx.uncertain.push('card_luhn');
          }
          return m;
        },
      },
    ],
    [
      'phone_e164',
      {
        re: PHONE_E164_RE,
        replace: (m) => {
          const n = m.replace(/\D/g, '').length;
          return n >= 8 && n <= 15 ? bump(ctx, 'PHONE') : m;
        },
      },
    ],
    ['phone_nanp', { re: PHONE_NANP_RE, replace: () => bump(ctx, 'PHONE') }],
    [
      'ipv4',
      {
        re: IPV4_RE,
        replace: (m, a, b, c, d) =>
          [a, b, c, d].every((o) => Number(o) <= 255 && (o!.length === 1 || !o!.startsWith('0'))) ? bump(ctx, 'IP') : m,
      },
    ],
  ];
}

/**
 * `s.replace(re, fn)` for a global V8 rule, as an exec loop that copies only around changed
 * matches: String.replace with a callback grew to ~25× the time per byte from 16 KiB to 1 MiB
 * on a string with tens of thousands of matches (`npm run bench:redact`, card rule on grouped
 * digits); this stays flat. Same matches and order (lastIndex moves to each match's end).
 */
export function replaceV8(re: RegExp, s: string, fn: (m: string, ...groups: string[]) => string): string {
  re.lastIndex = 0;
  let parts: string[] | null = null;
  let last = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    const whole = m[0];
    const rep = fn(whole, ...(m.slice(1) as string[]));
    if (rep !== whole) {
      (parts ??= []).push(s.slice(last, m.index), rep);
      last = m.index + whole.length;
    }
    if (whole.length === 0) re.lastIndex++;
  }
  re.lastIndex = 0;
  return parts === null ? s : parts.join('') + s.slice(last);
}
/** The IPv6 rule's replacement: only what Node parses as an address, with `::` or seven colons. */
export const ipv6Replace = (ctx: Ctx) => (m: string) =>
  (m.includes('::') || m.split(':').length === 8) && isIPv6(m) ? bump(ctx, 'IP') : m;

// One scan says whether any digit rule could fire; the rules run only then. Bounded too: an
// alternation of bounded patterns.
export const DIGIT_RULES_ANY = new RegExp(
  [IBAN_RE, SSN_RE, NINO_RE, CARD_RE, PHONE_E164_RE, PHONE_NANP_RE, IPV4_RE].map((r) => r.source).join('|'),
);

/** The V8 patterns, for the test that each is bounded by construction and for the benchmark. */
export const BOUNDED_V8_PATTERNS: ReadonlyArray<{ name: string; re: RegExp }> = Object.freeze([
  { name: 'ipv6', re: IPV6_RE },
  { name: 'iban', re: IBAN_RE },
  { name: 'ssn', re: SSN_RE },
  { name: 'nino', re: NINO_RE },
  { name: 'card', re: CARD_RE },
  { name: 'phone_e164', re: PHONE_E164_RE },
  { name: 'phone_nanp', re: PHONE_NANP_RE },
  { name: 'ipv4', re: IPV4_RE },
  { name: 'digit_rules_any', re: DIGIT_RULES_ANY },
]);
