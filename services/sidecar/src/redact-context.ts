// The state of one redaction call (counts, uncertainty, CPU budget, secret-name test) and the
// public option and result types. The rules read and write it; redact.ts walks the value.

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

/** What the rules and the walk share during one call; one per `redactJson` call. */
export interface Ctx {
  counts: Map<PiiType, number>;
  uncertain: string[];
  secretName: (normalisedName: string) => boolean;
  deadline: number;
  over: (() => boolean) | undefined;
  maxString: number;
  sinceCheck: number;
}

/** Thrown by {@link spend} when the budget ran out; `redactJson` turns it into `overBudget`. */
export class OverBudget extends Error {}

/** Counts one replacement of type `t` and returns its placeholder `<t>`. */
export function bump(ctx: Ctx, t: PiiType): string {
  ctx.counts.set(t, (ctx.counts.get(t) ?? 0) + 1);
  return `<${t}>`;
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
/** A fresh state for one call with options `o`. */
export function newCtx(o: RedactOptions): Ctx {
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
export function spend(ctx: Ctx, n: number): void {
  if (n > ctx.maxString) throw new OverBudget();
  ctx.sinceCheck += n + 16;
  if (ctx.sinceCheck < 2048) return;
  ctx.sinceCheck = 0;
  if (performance.now() > ctx.deadline || ctx.over?.() === true) throw new OverBudget();
}
