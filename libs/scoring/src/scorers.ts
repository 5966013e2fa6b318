import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { canonicalJson, compileRegex, type CompiledRegex, type Expectation } from '@shadowplane/contracts';

/** Where a score comes from; decides the trust class (programmatic and first-party vs judge). */
export type ScoreSource = 'programmatic' | 'first_party' | 'judge';

/**
 * One scorer's verdict on one output.
 * - `score`: 0..1, or null when the scorer could not score (no output, nothing to compare);
 *   null is "unscored", never 0 or 1.
 * - `scorer`: a stable name, e.g. `expect:numeric`, `json_valid`, `refusal`, `outcome:<source>`, `judge:<model>`
 * - `detail`: short human text (what was extracted / why null); never the whole output
 * - `hard`: true for a first-party hard assertion (a 0 on a candidate gates the verdict to fail)
 */
export interface ScoreResult {
  score: number | null;
  scorer: string;
  detail: string;
  source: ScoreSource;
  hard?: boolean;
}

const NUMBER_RE = /-?\$?\d[\d,]*(?:\.\d+)?/g;

/**
 * Normalises a number as written in text: drops `$`, thousands commas, surrounding spaces and a
 * trailing `.0…0`; returns the numeric value or null when it is not a number.
 * Examples: `"$1,234.00"` → 1234, `"18"` → 18, `"-3.50"` → -3.5, `"abc"` → null.
 */
export function normaliseNumber(s: string | number): number | null {
  if (typeof s === 'number') return Number.isFinite(s) ? s : null;
  const t = s.trim().replace(/^\$/, '').replace(/^-\$/, '-').replace(/,/g, '').replace(/\.$/, '');
  if (!/^-?\d+(?:\.\d+)?$/.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/**
 * The final answer number of a free-text output: the number after the GSM8K marker `#### ` when
 * present, else the last number in the text. Commas, `$` and a trailing `.0` are normalised.
 * Returns null when the text holds no number.
 * Source: GSM8K answer format (Cobbe et al. 2021, "Training Verifiers to Solve Math Word Problems").
 */
export function extractFinalNumber(text: string): number | null {
  const marker = /####\s*(-?\$?\d[\d,]*(?:\.\d+)?)/.exec(text);
  if (marker?.[1] !== undefined) return normaliseNumber(marker[1]);
  const all = text.match(NUMBER_RE);
  if (!all || all.length === 0) return null;
  return normaliseNumber(all[all.length - 1]!);
}

/** Numeric answer match: 1 when the output's final number equals `expected` (|Δ| ≤ 1e-9), else 0; null without output or parsable expectation. */
export function scoreNumeric(output: string | null, expected: string | number): ScoreResult {
  const want = normaliseNumber(expected);
  if (output === null) return { score: null, scorer: 'expect:numeric', detail: 'no output', source: 'programmatic' };
  if (want === null)
    return {
      score: null,
      scorer: 'expect:numeric',
      detail: `expected value is not a number: ${String(expected)}`,
      source: 'programmatic',
    };
  const got = extractFinalNumber(output);
  if (got === null)
    return {
      score: 0,
      scorer: 'expect:numeric',
      detail: `no number in output; expected ${want}`,
      source: 'programmatic',
    };
  const ok = Math.abs(got - want) <= 1e-9;
  return {
    score: ok ? 1 : 0,
    scorer: 'expect:numeric',
    detail: `got ${got}, expected ${want}`,
    source: 'programmatic',
  };
}

/** Exact match of the trimmed output with the trimmed expected string: 1 or 0; null without output. */
export function scoreExact(output: string | null, expected: string): ScoreResult {
  if (output === null) return { score: null, scorer: 'expect:exact', detail: 'no output', source: 'programmatic' };
  const ok = output.trim() === expected.trim();
  return { score: ok ? 1 : 0, scorer: 'expect:exact', detail: ok ? 'exact match' : 'differs', source: 'programmatic' };
}

/** Compiled patterns kept (least recently used dropped first): each holds re2js's lazily built DFA, up to ~8 MB. */
const MAX_COMPILED_PATTERNS = 16;
const compiledPatterns = new Map<string, CompiledRegex>();

/** {@link compileRegex} with a small least-recently-used cache: compiling costs 0.1–2 ms, matching a short output µs. */
function cachedRegex(pattern: string): CompiledRegex {
  let c = compiledPatterns.get(pattern);
  if (c !== undefined) compiledPatterns.delete(pattern);
  else {
    c = compileRegex(pattern);
    if (compiledPatterns.size >= MAX_COMPILED_PATTERNS) compiledPatterns.delete(compiledPatterns.keys().next().value!);
  }
  compiledPatterns.set(pattern, c);
  return c;
}

/**
 * Regex match anywhere in the output: 1 or 0; null without output, or for a pattern RE2 refuses
 * (not RE2 syntax — backreferences, lookaround — or over the size limits; contracts
 * `compileRegex`), the detail giving the reason. Matched by re2js (RE2's automata), so the time
 * is linear in the output's length for every accepted pattern: no pattern can stall a fold.
 */
export function scoreRegex(output: string | null, pattern: string, scorer = 'expect:regex'): ScoreResult {
  if (output === null) return { score: null, scorer, detail: 'no output', source: 'programmatic' };
  const c = cachedRegex(pattern);
  if (!c.ok) return { score: null, scorer, detail: `pattern refused: ${c.reason}`, source: 'programmatic' };
  const ok = c.re.test(output);
  return { score: ok ? 1 : 0, scorer, detail: ok ? 'matched' : 'no match', source: 'programmatic' };
}

/** Must-include: 1 when the output contains every string (case-sensitive), else 0 naming the first missing one. */
export function scoreMustInclude(output: string | null, needles: string[]): ScoreResult {
  if (output === null)
    return { score: null, scorer: 'expect:must_include', detail: 'no output', source: 'programmatic' };
  const missing = needles.find((n) => !output.includes(n));
  return missing === undefined
    ? { score: 1, scorer: 'expect:must_include', detail: `all ${needles.length} present`, source: 'programmatic' }
    : { score: 0, scorer: 'expect:must_include', detail: `missing ${JSON.stringify(missing)}`, source: 'programmatic' };
}

/** Must-not-include: 1 when the output contains none of the strings (case-sensitive), else 0 naming the first found. */
export function scoreMustNotInclude(output: string | null, needles: string[]): ScoreResult {
  if (output === null)
    return { score: null, scorer: 'expect:must_not_include', detail: 'no output', source: 'programmatic' };
  const found = needles.find((n) => output.includes(n));
  return found === undefined
    ? {
        score: 1,
        scorer: 'expect:must_not_include',
        detail: `none of ${needles.length} present`,
        source: 'programmatic',
      }
    : { score: 0, scorer: 'expect:must_not_include', detail: `found ${JSON.stringify(found)}`, source: 'programmatic' };
}

/**
 * Parses an output as JSON: the trimmed text, or the body of one Markdown code fence
 * (```json … ```) when the whole text is a fenced block. Returns `{ ok, value }`.
 */
export function parseJsonOutput(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const t = text.trim();
  const fence = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/.exec(t);
  const body = fence?.[1] ?? t;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

/** JSON validity: 1 when the output parses as JSON ({@link parseJsonOutput}), else 0; null without output. */
export function scoreJsonValid(output: string | null): ScoreResult {
  if (output === null) return { score: null, scorer: 'json_valid', detail: 'no output', source: 'programmatic' };
  const r = parseJsonOutput(output);
  return r.ok
    ? { score: 1, scorer: 'json_valid', detail: 'parsed', source: 'programmatic' }
    : { score: 0, scorer: 'json_valid', detail: `not JSON: ${r.error.slice(0, 120)}`, source: 'programmatic' };
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;
/** Distinct schemas kept compiled; past it the cache starts afresh (schemas come from requests). */
const MAX_COMPILED_SCHEMAS = 256;
const compiled = new Map<string, ValidateFunction | Error>();

/**
 * Compiles `schema` in an Ajv instance of its own: one shared instance would refuse a second
 * schema with the same `$id` ("already exists") and make a score depend on what was compiled
 * before. Async schemas (`$async`) are refused: their validator returns a Promise, not a verdict.
 */
function compileSchema(schema: Record<string, unknown>): ValidateFunction | Error {
  try {
    const v = addFormats(new Ajv({ allErrors: false, strict: false })).compile(schema);
    if ((v as { $async?: boolean }).$async === true) return new Error('async schemas ($async) are not supported');
    return v;
  } catch (e) {
    return e as Error;
  }
}

/**
 * JSON-Schema validity: 1 when the output parses as JSON and validates against `schema`
 * (JSON Schema draft-07 via ajv, formats from ajv-formats), 0 when it does not parse or is
 * invalid (detail names the first error), null without output, when the schema does not compile
 * or is async, or when validation itself fails (e.g. a schema that refers to itself without end).
 * Compiled schemas are cached by their canonical JSON (at most 256).
 */
export function scoreJsonSchema(output: string | null, schema: Record<string, unknown>): ScoreResult {
  if (output === null)
    return { score: null, scorer: 'expect:json_schema', detail: 'no output', source: 'programmatic' };
  const key = canonicalJson(schema);
  let v = compiled.get(key);
  if (v === undefined) {
    v = compileSchema(schema);
    if (compiled.size >= MAX_COMPILED_SCHEMAS) compiled.clear();
    compiled.set(key, v);
  }
  if (v instanceof Error)
    return {
      score: null,
      scorer: 'expect:json_schema',
      detail: `schema does not compile: ${v.message.slice(0, 120)}`,
      source: 'programmatic',
    };
  const parsed = parseJsonOutput(output);
  if (!parsed.ok) return { score: 0, scorer: 'expect:json_schema', detail: 'not JSON', source: 'programmatic' };
  let ok: boolean;
  try {
    ok = v(parsed.value) === true;
  } catch (e) {
    return {
      score: null,
      scorer: 'expect:json_schema',
      detail: `validation failed: ${(e as Error).message.slice(0, 120)}`,
      source: 'programmatic',
    };
  }
  if (ok) return { score: 1, scorer: 'expect:json_schema', detail: 'valid', source: 'programmatic' };
  const err = v.errors?.[0];
  return {
    score: 0,
    scorer: 'expect:json_schema',
    detail: `invalid at ${err?.instancePath || '/'}: ${err?.message ?? 'schema violation'}`,
    source: 'programmatic',
  };
}

/**
 * Phrases that mark a refusal, matched case-insensitively (curly apostrophes folded to ')
 * in the first 400 characters of the output. Kept short and literal on purpose: a refusal scorer
 * that guesses is worse than none. Extend by appending.
 */
export const REFUSAL_PHRASES: readonly string[] = Object.freeze([
  "i can't help with",
  'i cannot help with',
  "i can't assist with",
  'i cannot assist with',
  "i can't provide",
  'i cannot provide',
  "i'm sorry, but i can't",
  "i'm sorry, but i cannot",
  'i am sorry, but i cannot',
  "i'm unable to",
  'i am unable to',
  "i won't be able to",
  'i cannot comply',
  "i can't comply",
  'i must decline',
  "i'm not able to help",
  'i am not able to help',
  'as an ai language model, i cannot',
]);

/** Detects a refusal: `{ refused, phrase }` with the first matching phrase from {@link REFUSAL_PHRASES}. */
export function detectRefusal(text: string): { refused: boolean; phrase: string | null } {
  const head = text
    .slice(0, 400)
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'");
  const phrase = REFUSAL_PHRASES.find((p) => head.includes(p)) ?? null;
  return { refused: phrase !== null, phrase };
}

/** Refusal scorer: 0 when the output is a refusal ({@link detectRefusal}), 1 otherwise; null without output. */
export function scoreRefusal(output: string | null): ScoreResult {
  if (output === null) return { score: null, scorer: 'refusal', detail: 'no output', source: 'programmatic' };
  const r = detectRefusal(output);
  return r.refused
    ? { score: 0, scorer: 'refusal', detail: `refusal: ${JSON.stringify(r.phrase)}`, source: 'programmatic' }
    : { score: 1, scorer: 'refusal', detail: 'not a refusal', source: 'programmatic' };
}

/**
 * Scores one first-party expectation (Observation.expectations) against an output. The result
 * carries `hard: true` when the expectation is a hard assertion.
 */
export function scoreExpectation(exp: Expectation, output: string | null): ScoreResult {
  let r: ScoreResult;
  switch (exp.kind) {
    case 'numeric':
      r = scoreNumeric(output, exp.value);
      break;
    case 'exact':
      r = scoreExact(output, exp.value);
      break;
    case 'regex':
      r = scoreRegex(output, exp.value);
      break;
    case 'must_include':
      r = scoreMustInclude(output, exp.value);
      break;
    case 'must_not_include':
      r = scoreMustNotInclude(output, exp.value);
      break;
    case 'json_schema':
      r = scoreJsonSchema(output, exp.value);
      break;
  }
  return exp.hard === true ? { ...r, hard: true } : r;
}
