import { RE2JS } from 're2js';
import { describe, expect, it } from 'vitest';
import {
  Campaign,
  CampaignSpec,
  compileRegex,
  Expectation,
  FreezeRequest,
  Observation,
  REGEX_MAX_PATTERN_CHARS,
  REGEX_MAX_PROGRAM_SIZE,
  StoredCampaignSpec,
  SubmittedExpectation,
} from './index.js';

// Patterns RE2 cannot compile, each accepted by JavaScript's RegExp (the syntax before RE2).
const JS_ONLY = { backreference: '(a)\\1', lookahead: 'x(?=y)', negativeLookahead: 'x(?!y)', lookbehind: '(?<=x)y' };
// The catastrophic pattern: V8 takes 0.7 s on 200 characters, 12 s on 400 (grows ~n⁴).
const CATASTROPHIC = '^(?:.|\\n)*(?:.|\\n)*(?:.|\\n)*(?:.|\\n)*QQQ$';

const base = {
  name: 'n',
  suite: 's',
  call_types: ['a'],
  incumbent: { id: 'inc', provider: 'p', model: 'm' },
  candidates: [{ id: 'cand', provider: 'p', model: 'm2' }],
  max_cost_usd: 1,
};
const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) =>
  r.error?.issues.map((i) => i.path.join('.')) ?? [];

describe('regex patterns: RE2 only, within size limits', () => {
  it('compiles accepted patterns to re2js (automata, linear time), the catastrophic one included', () => {
    for (const p of ['^SELECT\\b', '#### \\d+', '(?i)yes|no', CATASTROPHIC]) {
      const c = compileRegex(p);
      expect(c.ok && c.re instanceof RE2JS, p).toBe(true);
    }
    // each refused pattern below is a valid JavaScript RegExp
    for (const p of Object.values(JS_ONLY)) expect(() => new RegExp(p)).not.toThrow();
  });
  it('refuses backreferences and lookaround, saying the rule', () => {
    for (const p of Object.values(JS_ONLY)) {
      const c = compileRegex(p);
      expect(c.ok, p).toBe(false);
      if (!c.ok) expect(c.reason).toContain('RE2 syntax: no backreferences or lookaround');
    }
  });
  it('refuses a pattern over the length limit and one whose program is over the size limit', () => {
    expect(REGEX_MAX_PATTERN_CHARS).toBe(1000);
    expect(REGEX_MAX_PROGRAM_SIZE).toBe(1000);
    expect(compileRegex('a'.repeat(900)).ok).toBe(true);
    const long = compileRegex('a'.repeat(1001));
    expect(long.ok).toBe(false);
    if (!long.ok) expect(long.reason).toContain('1001 characters');
    // {2,1000} unrolls into ~2 instructions per repetition: far over the program limit, 9 characters long
    const big = compileRegex('a{2,1000}');
    expect(big.ok).toBe(false);
    if (!big.ok) expect(big.reason).toContain('RE2 instructions');
  });

  it('expectations: the submitted schema refuses what RE2 cannot compile, naming value; the carried one reads it', () => {
    for (const p of Object.values(JS_ONLY)) {
      const e = { kind: 'regex', value: p };
      expect(paths(SubmittedExpectation.safeParse(e))).toEqual(['value']);
      expect(Expectation.parse(e)).toEqual(e);
    }
    expect(SubmittedExpectation.parse({ kind: 'regex', value: '^y' })).toEqual({ kind: 'regex', value: '^y' });
  });
  it('an imported item whose reference RE2 cannot compile is refused, naming it', () => {
    const item = (reference: unknown) => ({
      builder: { kind: 'import', items: [{ call_type: 'a', request: {}, reference }] },
    });
    expect(paths(FreezeRequest.safeParse(item({ kind: 'regex', value: JS_ONLY.lookbehind })))).toEqual([
      'builder.items.0.reference.value',
    ]);
    expect(
      paths(
        FreezeRequest.safeParse(
          item([
            { kind: 'exact', value: 'x' },
            { kind: 'regex', value: JS_ONLY.backreference },
          ]),
        ),
      ),
    ).toEqual(['builder.items.0.reference.1.value']);
  });

  it('a submitted spec is refused for a regex scorer or regex expectation RE2 cannot compile, each named', () => {
    const r = CampaignSpec.safeParse({
      ...base,
      scorers: [{ kind: 'expectations' }, { kind: 'regex', pattern: JS_ONLY.lookahead }],
      expectations: [
        { kind: 'exact', value: 'x' },
        { kind: 'regex', value: JS_ONLY.backreference },
      ],
    });
    expect(paths(r)).toEqual(['scorers.1.pattern', 'expectations.1.value']);
  });
  it('a stored campaign with such patterns still parses (launched when patterns were JavaScript)', () => {
    const spec = {
      ...base,
      scorers: [{ kind: 'expectations' }, { kind: 'regex', pattern: JS_ONLY.lookahead }],
      expectations: [{ kind: 'regex', value: JS_ONLY.backreference }],
    };
    const stored = StoredCampaignSpec.parse(spec);
    expect(stored.scorers[1]).toEqual({ kind: 'regex', pattern: JS_ONLY.lookahead });
    const record = {
      schema: 'shadow.campaign/v1',
      id: 'cmp_0123456789abcdef',
      spec: stored,
      spec_hash: 'h',
      comparison_key: 'k',
      run_index: 1,
      state: 'running',
      state_reason: null,
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:00:00Z',
    };
    expect(Campaign.parse(record).spec).toEqual(stored);
    // the other rules still hold for a stored spec
    expect(paths(StoredCampaignSpec.safeParse({ ...spec, call_types: ['a', 'a'] }))).toEqual(['call_types.1']);
  });
  it('an observation carrying such an expectation still parses', () => {
    expect(Observation.shape.expectations.parse([{ kind: 'regex', value: JS_ONLY.lookahead }])).toHaveLength(1);
  });
});
