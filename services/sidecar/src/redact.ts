// Redaction of captured bodies: the walk over a parsed JSON value and, per string, which rules
// run. What each placeholder covers, and the sources of the rules: PiiType (redact-context.ts).
import { RE2Set } from 're2js';
import {
  bump,
  newCtx,
  OverBudget,
  spend,
  type Ctx,
  type RedactionResult,
  type RedactOptions,
} from './redact-context.js';
import { applyRule, REDACTION_RULES, RULES } from './redact-rules.js';
import { DIGIT_RULES_ANY, digitRules, IPV6_RE, ipv6Replace, replaceV8 } from './redact-v8-rules.js';

export { ibanValid, luhnValid } from './redact-checksums.js';
export { normaliseFieldName, type PiiType, type RedactionResult, type RedactOptions } from './redact-context.js';
export { REDACTION_RULES } from './redact-rules.js';
export { BOUNDED_V8_PATTERNS, V8_MAX_REPEAT } from './redact-v8-rules.js';

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
