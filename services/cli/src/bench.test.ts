import { describe, expect, it } from 'vitest';
import { foldReport } from '@shadowplane/evidence';
import { synthCampaign, synthSpec } from '@shadowplane/testkit';
import { junitXml } from './bench.js';
import { evaluateGate } from './gate.js';

/** Minimal well-formedness check: every element closes in order, attributes quoted, no raw '<' or '&'. */
function wellFormed(xml: string): boolean {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: string[] = [];
  const re = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/g;
  let m: RegExpExecArray | null;
  let at = 0;
  while ((m = re.exec(body))) {
    if (m.index !== at) return false;
    at = re.lastIndex;
    if (m[5] !== undefined) {
      if (/&(?!(amp|lt|gt|quot|apos);)/.test(m[5])) return false;
      continue;
    }
    if (m[1]) {
      if (stack.pop() !== m[2]) return false;
    } else if (!m[4]) stack.push(m[2]!);
  }
  return at === body.length && stack.length === 0;
}

const CID = 'cmp_junit000000000000';
// 300 GSM8K items: `same` answers as the incumbent (passes), `bad` is right 40% of the time (fails)
const folded = foldReport({
  campaign: { campaign_id: CID, spec: synthSpec(['same', 'bad']), run_index: 1, state: 'completed' },
  messages: synthCampaign(CID, 300, 0.9, { same: 'same', bad: 0.4 }),
  provisional: false,
});

describe('JUnit XML for the CI gate', () => {
  it('one testcase per candidate and metric; failures carry the interval and the margin; counts add up', () => {
    const xml = junitXml(folded.report, evaluateGate(folded.report, false), false);
    expect(wellFormed(xml)).toBe(true);
    expect(xml).toContain('<testsuites name="shadowplane bench" tests="6" failures="2" errors="0">');
    expect(xml).toContain('<testsuite name="shadowplane.math" tests="6" failures="2" errors="0">');
    expect(xml).toContain(`<property name="report_id" value="${folded.reportId}"/>`);
    for (const name of ['decision', 'quality_noninferiority', 'cost_savings'])
      expect(xml).toContain(`<testcase classname="shadowplane.math.same" name="${name}"/>`);
    expect(xml).toMatch(
      /<testcase classname="shadowplane\.math\.bad" name="quality_noninferiority">\s*<failure message="quality delta -\d+\.\d\dpp, \d+\.\d\d% interval \[-\d+\.\d\dpp, -\d+\.\d\dpp\]: upper end below the margin -2pp; 300 pairs in 300 clusters"/,
    );
    expect(xml).toMatch(/<testcase classname="shadowplane\.math\.bad" name="decision">\s*<failure message="fail: /);
    // the bad candidate is still cheaper: its cost case passes
    expect(xml).toContain('<testcase classname="shadowplane.math.bad" name="cost_savings"/>');
  });

  it('a provisional report fails every decision case; an unmeasured comparison names why', () => {
    const xml = junitXml(folded.report, evaluateGate(folded.report, true), true);
    expect(wellFormed(xml)).toBe(true);
    expect(xml.match(/name="decision">\s*<failure message="the report is provisional"/g)).toHaveLength(2);
    const few = foldReport({
      campaign: { campaign_id: CID, spec: synthSpec(['same']), run_index: 1, state: 'completed' },
      messages: synthCampaign(CID, 5, 0.9, { same: 'same' }),
      provisional: false,
    });
    const x2 = junitXml(few.report, evaluateGate(few.report, false), false);
    expect(wellFormed(x2)).toBe(true);
    expect(x2).toContain('tests="3" failures="3"');
    expect(x2).toMatch(/not measured \(CANNOT_MEASURE\): insufficient: 5 paired items, need 8/);
  });

  it('a report without comparisons is one failing gate case; text is escaped', () => {
    const xml = junitXml({ call_types: [] }, { pass: false, reason: 'no <comparisons> & "none"', rows: [] }, false);
    expect(wellFormed(xml)).toBe(true);
    expect(xml).toContain('failure message="no &lt;comparisons&gt; &amp; &quot;none&quot;"');
  });
});
