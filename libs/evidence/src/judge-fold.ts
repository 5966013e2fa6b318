/**
 * The LLM judge's part of the fold: judge verdicts (`shadow.judge_verdict/v1`) → the judge scores
 * the composite uses, the families the same-family rule needs, and the judge's calibration
 * (Cohen's kappa against programmatic / first-party scores, position-flip rate), null counts and
 * spend. Pure; order-independent (verdicts are de-duplicated and sorted by stable keys).
 */
import type { CampaignSpec, JudgeSummary, JudgeVerdict, LlmJudgeSpec, ObsMessage } from '@shadowplane/contracts';
import type { ScoreResult } from '@shadowplane/scoring';
import { cohensKappa } from '@shadowplane/stats';

/** Verdicts of one campaign, one per (call type, item, arm, role, mode), sorted by that key. */
export function collectJudgeVerdicts(messages: readonly ObsMessage[], campaignId: string): JudgeVerdict[] {
  const by = new Map<string, JudgeVerdict>();
  for (const m of messages) {
    if (m.schema !== 'shadow.judge_verdict/v1' || m.campaign_id !== campaignId) continue;
    const k = `${m.call_type}|${m.item_hash}|${m.arm_id}|${m.role}|${m.mode}`;
    const had = by.get(k);
    // a redelivered verdict is the same verdict; keep the one with the smaller envelope id for order independence
    if (!had || m.envelope_id < had.envelope_id) by.set(k, m);
  }
  return [...by.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((e) => e[1]);
}

/** What the fold takes from the verdicts; see {@link judgeInputs}. */
export interface JudgeInputs {
  /** pointwise scores keyed `<item_hash>:<arm_id>:<role>` (only non-null scores) */
  pointwise: Map<string, ScoreResult>;
  /** pairwise candidate preference in [0, 1] keyed `<call_type>|<item_hash>|<candidate_arm_id>` (only non-null) */
  pairwise: Map<string, number>;
  judgeFamily: string | undefined;
  armFamilies: Record<string, string>;
}

/** Splits verdicts into pointwise and pairwise scores and reads the families they recorded. */
export function judgeInputs(verdicts: readonly JudgeVerdict[], incumbentId: string): JudgeInputs {
  const pointwise = new Map<string, ScoreResult>();
  const pairwise = new Map<string, number>();
  const armFamilies: Record<string, string> = {};
  let judgeFamily: string | undefined;
  for (const v of verdicts) {
    judgeFamily ??= v.judge_family;
    if (v.role === 'incumbent' && v.arm_families[0] !== undefined) armFamilies[v.arm_id] = v.arm_families[0];
    if (v.role === 'candidate') {
      if (v.arm_families[0] !== undefined) armFamilies[incumbentId] ??= v.arm_families[0];
      if (v.arm_families[1] !== undefined) armFamilies[v.arm_id] = v.arm_families[1];
    }
    if (v.score === null) continue;
    if (v.mode === 'pointwise')
      pointwise.set(`${v.item_hash}:${v.arm_id}:${v.role}`, {
        score: v.score,
        scorer: `judge:${v.judge_model}`,
        detail: `judge ${v.template_id}`,
        source: 'judge',
      });
    else pairwise.set(`${v.call_type}|${v.item_hash}|${v.arm_id}`, v.score);
  }
  return { pointwise, pairwise, judgeFamily, armFamilies };
}

/** Kappa label of a pointwise score: good at ≥ 0.5. */
export const goodBad = (x: number): string => (x >= 0.5 ? 'good' : 'bad');
/** Kappa label of a preference for the candidate in [0, 1] (or a quality difference cand − inc, centred at 0.5). */
export const preference = (p: number): string => (p > 0.5 ? 'candidate' : p < 0.5 ? 'incumbent' : 'tie');

/**
 * The judge summary over `verdicts` with the agreement pairs (judge label, programmatic label)
 * collected on the same items. Kappa with its 95% interval (libs/stats cohensKappa: Cohen 1960;
 * Fleiss, Cohen & Everitt 1969).
 */
export function judgeSummary(
  spec: CampaignSpec,
  verdicts: readonly JudgeVerdict[],
  agreement: readonly (readonly [string, string])[],
): JudgeSummary | undefined {
  const js = spec.scorers.find((s): s is LlmJudgeSpec => s.kind === 'llm_judge');
  if (!js) return undefined;
  const nulls: Record<string, number> = {};
  for (const v of verdicts)
    if (v.score === null) nulls[v.null_reason ?? 'unknown'] = (nulls[v.null_reason ?? 'unknown'] ?? 0) + 1;
  const charged = verdicts.reduce((a, v) => a + v.charged_micro_usd, 0);
  const flipsOf = verdicts.filter((v) => v.position_flip !== null);
  let kappa: JudgeSummary['kappa'] = null;
  let none: string | null = null;
  if (verdicts.length === 0) none = 'no judge verdicts';
  else if (agreement.length === 0)
    none = 'no judged item has a programmatic score or first-party outcome to compare with';
  else {
    const k = cohensKappa(agreement, 0.95);
    if (k.kappa === null)
      none = `kappa undefined: judge and programmatic scores used one single category on all ${k.n} items`;
    else
      kappa = {
        value: k.kappa,
        lower: k.lower!,
        upper: k.upper!,
        se: k.se!,
        n: k.n,
        observed_agreement: k.observed,
        against: 'programmatic_and_first_party',
      };
  }
  const tid = verdicts[0]?.template_id ?? `${js.mode}/${js.template_version}`;
  return {
    provider: js.provider,
    model: js.model,
    mode: js.mode,
    template_id: tid,
    template_hash: verdicts[0]?.template_hash ?? '',
    verdicts: verdicts.length,
    scored: verdicts.filter((v) => v.score !== null).length,
    null_scores: Object.fromEntries(
      Object.keys(nulls)
        .sort()
        .map((k) => [k, nulls[k]!]),
    ),
    calls: verdicts.reduce((a, v) => a + v.calls, 0),
    spend_usd: charged / 1e6,
    kappa,
    kappa_none_reason: none,
    position_flip:
      js.mode === 'pairwise'
        ? {
            n: flipsOf.filter((v) => v.position_flip).length,
            of: flipsOf.length,
            rate: flipsOf.length ? flipsOf.filter((v) => v.position_flip).length / flipsOf.length : null,
          }
        : null,
  };
}

/** One line about the judge's calibration for a class C verdict: its kappa, or why there is none. */
export function kappaText(j: JudgeSummary | undefined): string {
  if (!j) return 'no judge summary';
  if (j.kappa)
    return `judge kappa ${j.kappa.value.toFixed(2)} [${j.kappa.lower.toFixed(2)}, ${j.kappa.upper.toFixed(2)}] on ${j.kappa.n} items against programmatic scores${j.verdicts > 0 ? '' : ''}`;
  return `judge has no kappa: ${j.kappa_none_reason ?? 'unknown'}`;
}
