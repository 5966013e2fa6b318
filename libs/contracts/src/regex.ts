// The regular-expression syntax of every pattern that comes from a request or a spec (regex
// expectations, regex scorers): RE2, matched by re2js, whose automata take time linear in the
// input. A backtracking engine (V8's RegExp) lets one pattern stall whoever scores it:
// `^(?:.|\n)*(?:.|\n)*(?:.|\n)*(?:.|\n)*QQQ$` took 210 ms on 200 characters and grows as n⁴.
import { RE2JS } from 're2js';
import { z } from 'zod';

/** Longest pattern accepted, UTF-16 code units: bounds compile time (~2 ms at the limit). */
export const REGEX_MAX_PATTERN_CHARS = 1000;
/**
 * Largest compiled RE2 program accepted, instructions (re2js `programSize()`). Matching time is
 * linear in the output but grows with the program: the slowest pattern found under this limit,
 * `(?:[ab]*a[ab]{300}){1,3}c` (914 instructions, which defeats re2js's DFA), scanned 30–90 µs per
 * output byte on a loaded 2-core machine — under 0.4 s for an output of 1024 tokens. Typical
 * assertions compile to under 30 instructions and scan at under 0.01 µs per byte.
 */
export const REGEX_MAX_PROGRAM_SIZE = 1000;

/** The syntax rule as stated in refusals and docs. */
export const REGEX_SYNTAX = 'RE2 syntax: no backreferences or lookaround';

/** Outcome of {@link compileRegex}: the compiled pattern, or why it is refused. */
export type CompiledRegex = { ok: true; re: RE2JS } | { ok: false; reason: string };

/**
 * Compiles a pattern from a request or spec with RE2 (re2js, no flags: `.` excludes `\n`, `^`/`$`
 * anchor the whole text; inline `(?i)`, `(?s)`, `(?m)` work). Refused, with a reason naming the
 * rule: longer than {@link REGEX_MAX_PATTERN_CHARS}, not RE2 syntax (backreferences, lookaround,
 * `\u` escapes and other JavaScript-only forms), or a program over {@link REGEX_MAX_PROGRAM_SIZE}.
 * Never throws. Source: RE2 syntax, https://github.com/google/re2/wiki/Syntax.
 */
export function compileRegex(pattern: string): CompiledRegex {
  if (pattern.length > REGEX_MAX_PATTERN_CHARS)
    return {
      ok: false,
      reason: `pattern is ${pattern.length} characters, more than ${REGEX_MAX_PATTERN_CHARS}`,
    };
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    return { ok: false, reason: `not ${REGEX_SYNTAX} (${(e as Error).message})` };
  }
  const size = re.programSize();
  if (size > REGEX_MAX_PROGRAM_SIZE)
    return {
      ok: false,
      reason: `pattern compiles to ${size} RE2 instructions, more than ${REGEX_MAX_PROGRAM_SIZE} (large counted repetitions such as {1,1000} cost the most)`,
    };
  return { ok: true, re };
}

/** Patterns whose verdict is remembered; past it the memory starts afresh (patterns come from requests). */
const MAX_REMEMBERED = 1024;
const verdicts = new Map<string, string | null>();

/**
 * Why `pattern` is refused ({@link compileRegex}), or null when it is accepted. Verdicts are
 * remembered (at most 1024 patterns, only the reason string) because compiling costs 0.1–2 ms and
 * the sidecar checks the patterns of each sampled request; the compiled program is not kept.
 */
export function regexProblem(pattern: string): string | null {
  const known = verdicts.get(pattern);
  if (known !== undefined) return known;
  const c = compileRegex(pattern);
  const reason = c.ok ? null : c.reason;
  if (verdicts.size >= MAX_REMEMBERED) verdicts.clear();
  verdicts.set(pattern, reason);
  return reason;
}

/** A pattern field of a submitted spec or request: a string {@link compileRegex} accepts. */
export const RegexPattern = z.string().superRefine((p, ctx) => {
  const why = regexProblem(p);
  if (why !== null) ctx.addIssue({ code: 'custom', message: why });
});
