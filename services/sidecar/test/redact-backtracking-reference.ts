import { isIPv6 } from 'node:net';

/**
 * PII and secret redaction for captured request bodies. Every string value (and every object key)
 * of the parsed JSON body is scanned; matches are replaced by typed placeholders before an
 * envelope leaves the pod. What the redactor cannot decide makes the whole item `pii_uncertain`
 * (the capture is excluded), so an unsure match never leaves the pod unredacted.
 *
 * Placeholders and rules, in the order they are applied:
 * - `<API_KEY>`: OpenAI `sk-…`/`sk-proj-…`, Anthropic `sk-ant-…`, AWS access key ids
 *   `AKIA…`/`ASIA…`, `Bearer <token>`, GitHub `ghp_…`/`github_pat_…`, Slack `xox?-…`, Google
 *   `AIza…`, Stripe `sk_live_…`/`rk_live_…`, JWTs (`eyJ….eyJ….…`).
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
 * ranges (SSA, "Social Security Number Randomization", 2011).
 */
export type PiiType = 'API_KEY' | 'EMAIL' | 'IBAN' | 'CARD' | 'NATIONAL_ID' | 'PHONE' | 'IP';

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
}

interface Ctx {
  counts: Map<PiiType, number>;
  uncertain: string[];
}

const API_KEY_RES: RegExp[] = [
  /\bsk-ant-[A-Za-z0-9_-]{16,}/g,
  /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\b[Bb]earer\s+[A-Za-z0-9._~+/-]{12,}=*/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{40,}\b/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

const EMAIL_RE =
  /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b/g;

// 2 letters, 2 digits, then 11–30 alnum, optionally in space-separated groups of 4
const IBAN_RE = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g;

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

// 13–19 digits, optionally grouped by single spaces or dashes; not part of a longer digit/word run
const CARD_RE = /(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-]|\.\d)/g;

const SSN_RE = /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w-])/g;
const NINO_RE = /\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g;

const PHONE_E164_RE = /(?<![\w+])\+\d(?:[ ().-]{0,2}\d){7,14}(?!\w)/g;
const PHONE_NANP_RE = /(?<![\w(-])(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])/g;

const IPV4_RE = /(?<![\w.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\w]|\.\d)/g;
const IPV6_RE = /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g;

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

// One scan that finds whether any rule of a group could fire; the rules themselves run only then.
// Exactly equivalent to running them all: an alternation matches somewhere iff one of its
// branches does, and a rule that matches nowhere replaces nothing.
const API_KEY_ANY = new RegExp(API_KEY_RES.map((r) => r.source).join('|'));
const DIGIT_RULES_ANY = new RegExp(
  [IBAN_RE, SSN_RE, NINO_RE, CARD_RE, PHONE_E164_RE, PHONE_NANP_RE, IPV4_RE].map((r) => r.source).join('|'),
);

function bump(ctx: Ctx, t: PiiType): string {
  ctx.counts.set(t, (ctx.counts.get(t) ?? 0) + 1);
  return `<${t}>`;
}

function redactString(s: string, ctx: Ctx): string {
  // quick exit: nothing below can match a string without a digit, '@', ':' or a key-ish prefix
  if (s.length < 7 || !/[\d@:]|sk-|AIza|eyJ|[Bb]earer|gh[pousr]_|github_pat_|xox/.test(s)) return s;
  let out = s;
  if (API_KEY_ANY.test(out)) for (const re of API_KEY_RES) out = out.replace(re, () => bump(ctx, 'API_KEY'));
  // prefilters keep the backtracking-heavy patterns off strings that cannot match them
  if (out.includes('@')) out = out.replace(EMAIL_RE, () => bump(ctx, 'EMAIL'));
  if (out.includes(':'))
    out = out.replace(IPV6_RE, (m) =>
      (m.includes('::') || m.split(':').length === 8) && isIPv6(m) ? bump(ctx, 'IP') : m,
    );
  if (!/\d/.test(out) || !DIGIT_RULES_ANY.test(out)) return out; // every pattern below needs a digit
  out = out.replace(IBAN_RE, (m) => {
    const compact = m.replace(/ /g, '');
    if (ibanValid(compact)) return bump(ctx, 'IBAN');
    if (IBAN_LENGTHS[compact.slice(0, 2)] === compact.length) ctx.uncertain.push('iban_checksum');
    return m;
  });
  out = out.replace(SSN_RE, (m, a: string, g: string, sn: string) => {
    const area = Number(a);
    if (area === 0 || area === 666 || area >= 900 || g === '00' || sn === '0000') {
      ctx.uncertain.push('ssn_range');
      return m;
    }
    return bump(ctx, 'NATIONAL_ID');
  });
  out = out.replace(NINO_RE, () => bump(ctx, 'NATIONAL_ID'));
  out = out.replace(CARD_RE, (m) => {
    const digits = m.replace(/[ -]/g, '');
    const grouped = digits.length !== m.length;
    if (hasCardPrefix(digits)) {
      if (luhnValid(digits)) return bump(ctx, 'CARD');
      if (grouped) ctx.uncertain.push('card_luhn');
    }
    return m;
  });
  out = out.replace(PHONE_E164_RE, (m) => {
    const n = m.replace(/\D/g, '').length;
    return n >= 8 && n <= 15 ? bump(ctx, 'PHONE') : m;
  });
  out = out.replace(PHONE_NANP_RE, () => bump(ctx, 'PHONE'));
  out = out.replace(IPV4_RE, (m, a: string, b: string, c: string, d: string) =>
    [a, b, c, d].every((o) => Number(o) <= 255 && (o.length === 1 || !o.startsWith('0'))) ? bump(ctx, 'IP') : m,
  );
  return out;
}

function walk(v: unknown, ctx: Ctx, depth: number): unknown {
  if (typeof v === 'string') return redactString(v, ctx);
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
    if (redactString(k, ctx) !== k) {
      // PII in an object key: keys are structure, not content; never guess a rename
      ctx.uncertain.push('pii_in_key');
    }
    const x = obj[k];
    const y = walk(x, ctx, depth + 1);
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
 * Redacts every string in a parsed JSON value (objects and arrays walked recursively). The input
 * is not mutated; unchanged sub-trees are returned by reference.
 * @returns the redacted value, counts per placeholder type and whether the item is uncertain
 */
export function redactJson<T>(value: T): RedactionResult<T> {
  const ctx: Ctx = { counts: new Map(), uncertain: [] };
  const out = walk(value, ctx, 0) as T;
  return {
    value: out,
    counts: ctx.counts,
    uncertain: ctx.uncertain.length > 0,
    uncertainReasons: [...new Set(ctx.uncertain)],
  };
}

/** Redacts one string (same rules as {@link redactJson}). */
export function redactText(s: string): RedactionResult<string> {
  return redactJson(s);
}
