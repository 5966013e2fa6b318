// The RE2JS rules (linear time by construction) and the order they apply in.
import { RE2JS } from 're2js';
import { bump, type Ctx, type PiiType } from './redact-context.js';
import { secretWordMatcher, type FindMatcher } from './secret-words.js';

/**
 * One rule: a linear-time pattern, the group it replaces (0 = the whole match) and what replaces
 * it (null keeps the text, e.g. a digit run that fails its checksum).
 */
export interface Rule {
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
/** `s` with every match of `r` (leftmost first, non-overlapping, as String.replace) rewritten. */
export function applyRule(r: Rule, s: string, ctx: Ctx): string {
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
/** Every rule, in the order applied (earlier placeholders are never re-matched: `<`/`>` are outside every pattern). */
export const RULES: Rule[] = [
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
