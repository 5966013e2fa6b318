import { isIPv6 } from 'node:net';
import { RE2JS, RE2Set } from 're2js';
import { secretWordMatcher, type FindMatcher } from './secret-words.js';

/**
 * PII and secret redaction for captured request bodies. Every string value (and every object key)
 * of the parsed JSON body is scanned; matches are replaced by typed placeholders before an
 * envelope leaves the pod. What the redactor cannot decide makes the whole item `pii_uncertain`
 * (the capture is excluded), so an unsure match never leaves the pod unredacted.
 *
 * Every pattern runs on RE2JS (a port of RE2: automata, no backtracking), so each rule's time is
 * linear in the string it scans whatever the string holds (a crafted body cannot make a rule
 * quadratic or exponential, as it could on V8's backtracking engine); `npm run bench:redact`
 * measures time per byte per rule on adversarial inputs up to 1 MiB. The only V8 pattern left is the
 * quick-exit test, an alternation of fixed strings and one character class: bounded work per
 * position by construction. RE2 has no look-around; where a rule needs its neighbours, the
 * pattern consumes them and the rule replaces only its core group, and the next search starts at
 * the end of that core, so a neighbour consumed by one match still counts for the next.
 *
 * Placeholders and rules, in the order they are applied:
 * - `<SECRET>`: any string or number (or array of them) under an object member whose name, with case and
 *   separators (`-_ .`) ignored, is or ends with a secret name ({@link DEFAULT_SECRET_FIELD_NAMES}, plus
 *   configured ones); and inside any string, the value of `name: value` / `name=value` / `name "value"`
 *   for those names (api key, password, secret, token, …).
 * - `<PRIVATE_KEY>`: PEM blocks (`-----BEGIN …-----` … `-----END …-----`); an unterminated
 *   `BEGIN … PRIVATE KEY` takes the rest of the string.
 * - `<CREDENTIALS>`: URL userinfo (`scheme://user:pass@host` → `scheme://<CREDENTIALS>@host`), and
 *   HTTP Basic credentials (`Basic <base64 of user:pass>`).
 * - `<API_KEY>`: OpenAI `sk-…`/`sk-proj-…`, Anthropic `sk-ant-…`, AWS access key ids
 *   `AKIA…`/`ASIA…`, `Bearer <token>`, GitHub `ghp_…`/`github_pat_…`, GitLab `glpat-…`, Slack
 *   `xox?-…`/`xapp-…`, Google `AIza…`/`ya29.…`, Stripe `sk_live_…`/`rk_live_…`, npm `npm_…`,
 *   Hugging Face `hf_…`, SendGrid `SG.….…`, Groq `gsk_…`, Replicate `r8_…`, JWTs (`eyJ….eyJ….…`).
 * - `<EMAIL>`: local@domain.tld.
 * - `<IBAN>`: 2-letter country, 2 check digits, 11–30 alphanumerics (spaces allowed in groups of
 *   4), ISO 13616 mod-97 check passes. Shape and the country's registered length match but mod-97
 *   fails → uncertain (a mistyped IBAN is still someone's account).
 * - `<CARD>`: 13–19 digits, optionally grouped by single spaces or dashes, with a card-network
 *   prefix (Visa 4, Mastercard 51–55/22–27, Amex 34/37, Discover/UnionPay 6, JCB 35,
 *   Diners 30/36/38) and a passing Luhn check. A *grouped* run (e.g. `4111 1111 1111 1112`) with a
 *   card prefix that fails Luhn → uncertain (a human-typed card with a typo). A bare digit run that
 *   fails Luhn, or has no card prefix, is left alone: order ids, millisecond timestamps and
 *   phone-less numbers are far more common than mistyped cards written without spaces.
 * - `<NATIONAL_ID>`: US SSN `ddd-dd-dddd` in the valid ranges (area not 000/666/9xx, group not
 *   00, serial not 0000); the same shape outside those ranges → uncertain. UK National Insurance
 *   numbers (`AB 12 34 56 C`).
 * - `<PHONE>`: `+` and 8–15 digits (E.164, separators allowed), or North-American
 *   `(ddd) ddd-dddd` / `ddd-ddd-dddd` / `ddd.ddd.dddd`.
 * - `<IP>`: IPv4 dotted quads with every octet ≤ 255 (version strings like `1.2.3.4` are redacted
 *   too: over-redaction is the safe side), IPv6 addresses that Node's `net.isIPv6` accepts and that
 *   contain `::` or seven colons.
 *
 * Sources: Luhn (ISO/IEC 7812-1 Annex B); IBAN mod-97 (ISO 13616-1, ISO 7064 MOD 97-10); SSN
 * ranges (SSA, "Social Security Number Randomization", 2011); PEM (RFC 7468); URL userinfo
 * (RFC 3986 §3.2.1); Basic (RFC 7617). Recall on a corpus: `services/sidecar/test/secrets-corpus.ts`.
 */
export type PiiType =
  'SECRET' | 'PRIVATE_KEY' | 'CREDENTIALS' | 'API_KEY' | 'EMAIL' | 'IBAN' | 'CARD' | 'NATIONAL_ID' | 'PHONE' | 'IP';

/** The outcome of redacting one value. */
export interface RedactionResult<T> {
  /** the value with every match replaced by its placeholder */
  value: T;
  /** placeholder type → number of replacements */
  counts: Map<PiiType, number>;
  /** true when something PII-like could not be classified; the item must be excluded */
  uncertain: boolean;
  /** what made it uncertain (a rule name, never the matched text) */
  uncertainReasons: string[];
  /** true when the CPU budget ran out before every string was scanned: `value` is incomplete and must not leave the pod */
  overBudget: boolean;
}

/** Options of {@link redactJson}. */
export interface RedactOptions {
  /** extra secret member names (matched like the defaults: case and `-_ .` ignored, equal or a suffix) */
  secretFieldNames?: readonly string[];
  /**
   * `performance.now()` after which redaction stops with `overBudget` (checked between strings,
   * each string's scan being linear in its length); default none
   */
  deadline?: number;
  /** a budget meter checked at the same points as `deadline` (e.g. the build's CPU budget); true = stop with `overBudget` */
  overBudget?: () => boolean;
  /** a string longer than this (UTF-16 units) also ends redaction with `overBudget` (an inline build hands such a body to the worker); default none */
  maxStringLength?: number;
}

/**
 * Member names whose values are secrets (normalised: lower case, no `-`, `_`, ` `, `.`). A name
 * matches when it equals one or ends with one (`openai_api_key`, `DB-Password`, `x.auth.token`);
 * `max_tokens` does not (`tokens` ≠ `token`).
 */
const DEFAULT_SECRET_FIELD_NAMES: readonly string[] = Object.freeze([
  'apikey',
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'secret',
  'token',
  'authorization',
  'auth',
  'clientsecret',
  'privatekey',
  'accesskey',
  'secretkey',
  'credential',
  'credentials',
  'cookie',
  'setcookie',
  'sessionid',
  'signature',
  'pin',
  'cvv',
  'cvc',
]);

interface Ctx {
  counts: Map<PiiType, number>;
  uncertain: string[];
  secretName: (normalisedName: string) => boolean;
  deadline: number;
  over: (() => boolean) | undefined;
  maxString: number;
  sinceCheck: number;
}

class OverBudget extends Error {}

/** Registered IBAN lengths per country (ISO 13616 registry, subset covering SEPA and common others). */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24,
  AE: 23,
  AL: 28,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  CH: 21,
  CR: 22,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  DO: 28,
  EE: 20,
  EG: 29,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  GT: 28,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MR: 27,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TN: 24,
  TR: 26,
  UA: 29,
  VG: 24,
  XK: 20,
};

/** Luhn checksum (ISO/IEC 7812-1 Annex B) over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** IBAN mod-97 check (ISO 13616 / ISO 7064 MOD 97-10) over an IBAN without spaces. */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(s)) return false;
  const rearranged = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const v = code >= 65 ? String(code - 55) : ch;
    for (const c of v) rem = (rem * 10 + (c.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
}

function hasCardPrefix(d: string): boolean {
  if (d.startsWith('4')) return d.length === 13 || d.length === 16 || d.length === 19;
  const two = Number(d.slice(0, 2));
  const four = Number(d.slice(0, 4));
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return d.length === 16;
  if (two === 34 || two === 37) return d.length === 15;
  if (two === 35) return d.length >= 16 && d.length <= 19;
  if (two === 30 || two === 36 || two === 38) return d.length >= 14 && d.length <= 19;
  if (d.startsWith('6')) return d.length >= 16 && d.length <= 19;
  return false;
}

function bump(ctx: Ctx, t: PiiType): string {
  ctx.counts.set(t, (ctx.counts.get(t) ?? 0) + 1);
  return `<${t}>`;
}

/**
 * One rule: a linear-time pattern, the group it replaces (0 = the whole match) and what replaces
 * it (null keeps the text, e.g. a digit run that fails its checksum).
 */
interface Rule {
  re: RE2JS;
  group: number;
  replace: (m: FindMatcher, ctx: Ctx) => string | null;
  /** matches as `re` does, faster (the secret-name rules); default: `re`'s own matcher */
  find?: (s: string) => FindMatcher;
}

const rule = (pattern: string, group: number, replace: Rule['replace']): Rule => ({
  re: RE2JS.compile(pattern),
  group,
  replace,
});
const placeholder = (t: PiiType) => (_m: FindMatcher, ctx: Ctx) => bump(ctx, t);

/**
 * A rule on V8's engine, allowed only for a pattern bounded by construction: no unbounded
 * quantifier (`*`, `+`, `{n,}`), every repetition at most {@link V8_MAX_REPEAT}, look-arounds of one
 * character, so the work at each start position is bounded by a constant and a scan is linear in
 * the string (tested: `boundedByConstruction`). The digit-shaped rules are of that kind; on RE2JS
 * their bounded repetitions expand into large automata that ran 100–500× slower (about 1 µs per
 * byte on grouped digits).
 */
interface V8Rule {
  re: RegExp;
  replace: (m: string, ...groups: string[]) => string;
}
export const V8_MAX_REPEAT = 64;

/** `s` with every match of `r` (leftmost first, non-overlapping, as String.replace) rewritten. */
function applyRule(r: Rule, s: string, ctx: Ctx): string {
  const m = r.find ? r.find(s) : r.re.matcher(s);
  let pos = 0;
  let last = 0;
  let out = '';
  while (pos <= s.length && m.find(pos)) {
    const a = m.start(r.group);
    const b = m.end(r.group);
    const rep = r.replace(m, ctx);
    if (rep !== null) {
      out += s.slice(last, a) + rep;
      last = b;
    }
    pos = b > pos ? b : pos + 1;
  }
  return last === 0 ? s : out + s.slice(last);
}

// Secret names inside free text: `password: x`, `"api_key": "x"`, `client-secret=x`, `token = x`.
const SECRET_WORD_LIST = [
  'api[-_. ]?key',
  'pass(?:word|wd|phrase)',
  'secret',
  'token',
  'authorization',
  'client[-_. ]?secret',
  'private[-_. ]?key',
  'access[-_. ]?key',
  'secret[-_. ]?key',
  'credentials?',
];
const SECRET_WORDS = SECRET_WORD_LIST.join('|');
/**
 * A secret-name rule: `(?i)(?:SECRET_WORDS)` + `tail` as RE2JS (the rule set's one-pass
 * prefilter), matched by {@link secretWordMatcher} on V8, which finds the same matches in linear
 * time at the per-byte cost of the other rules (RE2JS ran these case-insensitive patterns at
 * ~3 µs per byte). RE2's `\s` is `[\t\n\f\r ]`: the V8 tail spells it out (V8's `\s` is wider).
 */
function wordRule(tail: string, group: number, replace: Rule['replace']): Rule {
  return {
    ...rule(`(?i)(?:${SECRET_WORDS})${tail}`, group, replace),
    find: secretWordMatcher(SECRET_WORD_LIST, tail.replaceAll('\\s', '\\t\\n\\f\\r ')),
  };
}
const KV_RULE = wordRule(`["']?[ \\t]*[:=][ \\t]*["']?([^\\s"',;&<>]{3,})`, 1, (m, ctx) => {
  const v = m.group(1) ?? '';
  // `Bearer x` / `Basic x`: the word after the scheme is the credential, the scheme is not
  if (/^(?:bearer|basic)$/i.test(v)) return null;
  return bump(ctx, 'SECRET');
});
const KV_SCHEME_RULE = wordRule(
  `["']?[ \\t]*[:=][ \\t]*["']?(?:bearer|basic|token|digest)[ \\t]+([^\\s"',;&<>]{3,})`,
  1,
  placeholder('SECRET'),
);

// `password "x"` / `token 'x'`: a secret name followed by a quoted value (optionally after "is")
const QUOTED_RULE = wordRule(`["']?[ \\t]+(?:is[ \\t]+)?["']([^"'\\s<>]{3,})["']`, 1, placeholder('SECRET'));

const PEM_RULE = rule(
  '-----BEGIN ([A-Z0-9 ]{1,64})-----[\\s\\S]*?-----END [A-Z0-9 ]{1,64}-----',
  0,
  placeholder('PRIVATE_KEY'),
);
const PEM_OPEN_RULE = rule('-----BEGIN [A-Z0-9 ]{0,64}PRIVATE KEY-----[\\s\\S]*', 0, placeholder('PRIVATE_KEY'));
const USERINFO_RULE = rule(
  '\\b[A-Za-z][A-Za-z0-9+.-]{0,31}://([^\\s/?#@:"\'<>]{1,256}(?::[^\\s/?#@"\'<>]{0,256})?)@',
  1,
  placeholder('CREDENTIALS'),
);
const BASIC_RULE = rule('\\b[Bb]asic[ \\t]+([A-Za-z0-9+/]{4,}=*)', 1, (m, ctx) => {
  // only when it decodes to `user:password` (RFC 7617): "basic training" is not a credential
  const decoded = Buffer.from(m.group(1) ?? '', 'base64').toString('latin1');
  return /^[\x20-\x7e]+:[\x20-\x7e]*$/.test(decoded) ? bump(ctx, 'CREDENTIALS') : null;
});

const API_KEY_PATTERNS: string[] = [
  '\\bsk-ant-[A-Za-z0-9_-]{16,}',
  '\\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}',
  '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b',
  '\\b[Bb]earer\\s+[A-Za-z0-9._~+/-]{12,}=*',
  '\\bgh[pousr]_[A-Za-z0-9]{30,}\\b',
  '\\bgithub_pat_[A-Za-z0-9_]{40,}\\b',
  '\\bglpat-[A-Za-z0-9_-]{20,}',
  '\\bxox[abposr]-[A-Za-z0-9-]{10,}',
  '\\bxapp-[A-Za-z0-9-]{20,}',
  '\\bAIza[0-9A-Za-z_-]{35}\\b',
  '\\bya29\\.[0-9A-Za-z_-]{20,}',
  '\\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\\b',
  '\\bnpm_[A-Za-z0-9]{36}\\b',
  '\\bhf_[A-Za-z0-9]{30,}\\b',
  '\\bSG\\.[A-Za-z0-9_-]{16,}\\.[A-Za-z0-9_-]{16,}',
  '\\bgsk_[A-Za-z0-9]{40,}\\b',
  '\\br8_[A-Za-z0-9]{30,}\\b',
  '\\beyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}',
];
const API_KEY_RULES = API_KEY_PATTERNS.map((p) => rule(p, 0, placeholder('API_KEY')));

const EMAIL_RULE = rule(
  "[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.[A-Za-z]{2,24}\\b",
  0,
  placeholder('EMAIL'),
);

const IPV6_RE = /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g;

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
function digitRules(ctx: Ctx): [string, V8Rule][] {
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
function replaceV8(re: RegExp, s: string, fn: (m: string, ...groups: string[]) => string): string {
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

const ipv6Replace = (ctx: Ctx) => (m: string) =>
  (m.includes('::') || m.split(':').length === 8) && isIPv6(m) ? bump(ctx, 'IP') : m;

// One scan says whether any digit rule could fire; the rules run only then. Bounded too: an
// alternation of bounded patterns.
const DIGIT_RULES_ANY = new RegExp(
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

/** Every rule, in the order applied (earlier placeholders are never re-matched: `<`/`>` are outside every pattern). */
const RULES: Rule[] = [
  PEM_RULE,
  PEM_OPEN_RULE,
  USERINFO_RULE,
  KV_SCHEME_RULE,
  BASIC_RULE,
  KV_RULE,
  QUOTED_RULE,
  ...API_KEY_RULES,
  EMAIL_RULE,
];

/**
 * The rules by name, for the per-rule adversarial benchmark (`loadtests/redact-bench.ts`) and the
 * test that every rule is an RE2JS pattern. Not for matching: use {@link redactJson}.
 */
export const REDACTION_RULES: ReadonlyArray<{ name: string; re: RE2JS; find?: (s: string) => FindMatcher }> =
  Object.freeze(
    (
      [
        ['pem', PEM_RULE],
        ['pem_open', PEM_OPEN_RULE],
        ['url_userinfo', USERINFO_RULE],
        ['secret_kv_scheme', KV_SCHEME_RULE],
        ['basic', BASIC_RULE],
        ['secret_kv', KV_RULE],
        ['secret_quoted', QUOTED_RULE],
        ...API_KEY_RULES.map((r, i) => [`api_key_${i}`, r] as const),
        ['email', EMAIL_RULE],
      ] as const
    ).map(([name, r]) => (r.find ? { name, re: r.re, find: r.find } : { name, re: r.re })),
  );

/** Runs one named rule (RE2JS or bounded V8) over `s` (benchmark and tests); throws on an unknown name. */
export function applyNamedRule(name: string, s: string): string {
  const ctx = newCtx({});
  const i = REDACTION_RULES.findIndex((r) => r.name === name);
  if (i >= 0) return applyRule(RULES[i]!, s, ctx);
  if (name === 'ipv6') return replaceV8(IPV6_RE, s, ipv6Replace(ctx));
  if (name === 'digit_rules_any') return String(DIGIT_RULES_ANY.test(s));
  const d = digitRules(ctx).find(([n]) => n === name);
  if (d === undefined) throw new Error(`unknown redaction rule ${name}`);
  return replaceV8(d[1].re, s, d[1].replace);
}

// One DFA pass over a string says which rules match somewhere in it; only those run, in order.
// Exactly equivalent to running all of them: a rule that matches nowhere replaces nothing. A
// replacement can make a later rule match (`::x@y.io` → `::<EMAIL>`, whose `::` is now an
// address), so after one the pass is run again on the new text for the rules still to come.
const ANY = new RE2Set(RE2Set.UNANCHORED, 0);
for (const r of RULES) ANY.add(r.re.pattern());
ANY.compile();
const byIndex = (a: number, b: number) => a - b;

// quick exits, on V8: alternations of fixed strings and classes, so bounded work per position.
// No RE2JS rule can match a string without one of RE2_TRIGGERS (its fixed parts: a key prefix, a
// secret name, `://`, `@`, …), and no rule at all without one of QUICK; a ~1 KB chat message with
// digits but none of them skips the automaton pass (~20 µs) and goes straight to the digit rules.
const QUICK =
  /[\d@:=]|api[-_. ]?key|sk-|[sr]k_|AKIA|ASIA|AIza|eyJ|earer|asic|gh[pousr]_|github_pat_|glpat-|xox|xapp-|ya29|npm_|hf_|SG\.|gsk_|r8_|-----BEGIN|ecret|oken|ass|uthorization|rivate|redential|ccess/i;
// Most prose has none of the characters below; then only the rules whose fixed parts are letters,
// digits, spaces or a dot can match (Bearer, Basic, AWS ids, Google keys and OAuth tokens,
// SendGrid, JWTs), and a case-sensitive test of those literals stands in for the slower
// case-insensitive alternation (profiled: 15% of a 1 KB capture's redaction). Every other RE2JS
// rule needs one of these characters: `@` (email), `-` (PEM, sk-, glpat-, xox*-, xapp-), `_`
// (gh*_, github_pat_, sk_/rk_, npm_, hf_, gsk_, r8_), `:`/`/` (URL userinfo), `:`/`=` or a quote
// (secret names with a value).
const RE2_CHARS = /[@/\-_:="']/;
const RE2_LITERALS = /[Bb]earer|[Bb]asic|AKIA|ASIA|AIza|ya29|SG\.|eyJ/;
const RE2_TRIGGERS =
  /-----BEGIN|:\/\/|@|api[-_. ]?key|pass(?:word|wd|phrase)|secret|token|authorization|private[-_. ]?key|access[-_. ]?key|credential|basic|sk-|[sr]k_|AKIA|ASIA|AIza|eyJ|bearer|gh[pousr]_|github_pat_|glpat-|xox|xapp-|ya29|npm_|hf_|SG\.|gsk_|r8_/i;

function redactString(s: string, ctx: Ctx): string {
  if (s.length < 7 || !QUICK.test(s)) return s;
  let hits = (RE2_CHARS.test(s) ? RE2_TRIGGERS.test(s) : RE2_LITERALS.test(s)) ? ANY.match(s).sort(byIndex) : [];
  let out = s;
  for (let k = 0; k < hits.length; k++) {
    const i = hits[k]!;
    const next = applyRule(RULES[i]!, out, ctx);
    if (next === out) continue;
    out = next;
    hits = ANY.match(out)
      .filter((j) => j > i)
      .sort(byIndex);
    k = -1;
  }
  if (out.includes(':')) out = replaceV8(IPV6_RE, out, ipv6Replace(ctx));
  if (!/\d/.test(out) || !DIGIT_RULES_ANY.test(out)) return out; // every pattern below needs a digit
  for (const [, r] of digitRules(ctx)) out = replaceV8(r.re, out, r.replace);
  return out;
}

/** Lower case without `-`, `_`, ` `, `.`: the form secret names are compared in. */
export function normaliseFieldName(name: string): string {
  return name.toLowerCase().replace(/[-_ .]/g, '');
}

/** Whether a member name is a secret's, cached per name set (member names repeat across requests). */
function secretNameTest(extra: readonly string[] | undefined): (k: string) => boolean {
  const key = extra && extra.length > 0 ? extra.join('\u0000') : '';
  let t = SECRET_TESTS.get(key);
  if (t === undefined) {
    const names = [...new Set([...DEFAULT_SECRET_FIELD_NAMES, ...(extra ?? []).map(normaliseFieldName)])].filter(
      (n) => n.length > 0,
    );
    const cache = new Map<string, boolean>();
    t = (k: string) => {
      let v = cache.get(k);
      if (v === undefined) {
        const n = normaliseFieldName(k);
        v = names.some((x) => n.endsWith(x));
        if (cache.size >= 4096) cache.clear();
        cache.set(k, v);
      }
      return v;
    };
    if (SECRET_TESTS.size >= 16) SECRET_TESTS.clear();
    SECRET_TESTS.set(key, t);
  }
  return t;
}
const SECRET_TESTS = new Map<string, (k: string) => boolean>();

function newCtx(o: RedactOptions): Ctx {
  return {
    counts: new Map(),
    uncertain: [],
    secretName: secretNameTest(o.secretFieldNames),
    deadline: o.deadline ?? Infinity,
    over: o.overBudget,
    maxString: o.maxStringLength ?? Infinity,
    sinceCheck: 0,
  };
}

/** Checks the budget before each string, reading the clock every ~2 KiB of text (once per string would cost more than most scans). */
function spend(ctx: Ctx, n: number): void {
  if (n > ctx.maxString) throw new OverBudget();
  ctx.sinceCheck += n + 16;
  if (ctx.sinceCheck < 2048) return;
  ctx.sinceCheck = 0;
  if (performance.now() > ctx.deadline || ctx.over?.() === true) throw new OverBudget();
}

/** A scalar under a secret name, or an array of them, as `<SECRET>`; anything else is walked as usual. */
function redactSecretValue(v: unknown, ctx: Ctx, depth: number): unknown {
  if (typeof v === 'string' || typeof v === 'number') return v === '' ? v : bump(ctx, 'SECRET');
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number' || x === null))
    return v.map((x) => (x === null || x === '' ? x : bump(ctx, 'SECRET')));
  return walk(v, ctx, depth);
}

function walk(v: unknown, ctx: Ctx, depth: number): unknown {
  if (typeof v === 'string') {
    spend(ctx, v.length);
    return redactString(v, ctx);
  }
  if (v === null || typeof v !== 'object') return v;
  if (depth > 256) {
    ctx.uncertain.push('too_deep');
    return v;
  }
  // arrays and objects are copied only from their first changed member on, so an untouched
  // sub-tree costs no allocation and is returned by reference
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      const y = walk(x, ctx, depth + 1);
      if (out === null && y !== x) out = v.slice(0, i);
      if (out !== null) out.push(y);
    }
    return out ?? v;
  }
  const obj = v as Record<string, unknown>;
  const keys = Object.keys(obj);
  let out: Record<string, unknown> | null = null;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    spend(ctx, k.length);
    if (redactString(k, ctx) !== k) {
      // PII in an object key: keys are structure, not content; never guess a rename
      ctx.uncertain.push('pii_in_key');
    }
    const x = obj[k];
    const y = ctx.secretName(k) ? redactSecretValue(x, ctx, depth + 1) : walk(x, ctx, depth + 1);
    if (out === null && y !== x) {
      out = {};
      for (let j = 0; j < i; j++) setMember(out, keys[j]!, obj[keys[j]!]);
    }
    if (out !== null) setMember(out, k, y);
  }
  return out ?? v;
}

/** `o[k] = x` as JSON.parse would make it: a key `__proto__` is an own member, not the prototype. */
function setMember(o: Record<string, unknown>, k: string, x: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: x, enumerable: true, writable: true, configurable: true });
  else o[k] = x;
}

/**
 * Redacts every string in a parsed JSON value (objects and arrays walked recursively), and every
 * value under a secret member name. The input is not mutated; unchanged sub-trees are returned by
 * reference.
 * @returns the redacted value, counts per placeholder type, whether the item is uncertain, and
 *   whether the deadline ran out first (then `value` is partial and must be dropped)
 */
export function redactJson<T>(value: T, options: RedactOptions = {}): RedactionResult<T> {
  const ctx = newCtx(options);
  try {
    const out = walk(value, ctx, 0) as T;
    return {
      value: out,
      counts: ctx.counts,
      uncertain: ctx.uncertain.length > 0,
      uncertainReasons: [...new Set(ctx.uncertain)],
      overBudget: false,
    };
  } catch (e) {
    if (!(e instanceof OverBudget)) throw e;
    return { value, counts: ctx.counts, uncertain: true, uncertainReasons: ['over_budget'], overBudget: true };
  }
}

/** Redacts one string (same rules as {@link redactJson}). */
export function redactText(s: string, options: RedactOptions = {}): RedactionResult<string> {
  return redactJson(s, options);
}
