// A matcher for the "secret name, then its value" rules that runs in linear time on V8: RE2JS
// runs their case-insensitive patterns about 1000× slower per byte than its other rules.

/** The part of a find the redactor reads: RE2JS `Matcher`'s find/start/end/group. */
export interface FindMatcher {
  find(from: number): boolean;
  start(group: number): number;
  end(group: number): number;
  group(group: number): string | null;
}

/**
 * A leftmost-first matcher for `(?i)(?:w1|w2|…)TAIL` on V8, with RE2's semantics: the leftmost
 * match, and at its start the first word (in order) that leads to a match — what a backtracking
 * engine picks too. Linear in the string although V8 backtracks: the words are fixed strings with
 * single optional characters, and the tails (the secret-name rules in redact-rules.ts) are
 * deterministic — every optional part is told apart by its next character and each run stops at
 * a character the next part needs — so an attempt at a position reads at most the runs that
 * follow a word there, and runs that follow different words do not overlap (a value run is
 * consumed by the match that reads it). Case folding is Unicode simple case folding (`iu`), as
 * RE2's `(?i)`.
 * @param words the alternatives, in priority order, as pattern sources
 * @param tail the pattern after the word (capture group 1 = the value the rule replaces)
 */
export function secretWordMatcher(words: readonly string[], tail: string): (s: string) => FindMatcher {
  // d: group offsets come from the engine
  const re = new RegExp(`(?:${words.join('|')})${tail}`, 'giud');
  return (s: string) => {
    let m: RegExpExecArray | null = null;
    return {
      find(from: number): boolean {
        re.lastIndex = from;
        m = re.exec(s);
        return m !== null;
      },
      start(group: number): number {
        return m?.indices?.[group]?.[0] ?? -1;
      },
      end(group: number): number {
        return m?.indices?.[group]?.[1] ?? -1;
      },
      group(group: number): string | null {
        return m === null ? null : (m[group] ?? null);
      },
    };
  };
}
