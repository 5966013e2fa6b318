import type { CampaignSpec, LlmJudgeSpec, ProviderEntry } from '@shadowplane/contracts';
import { attemptUpperBoundMicroUsd } from '@shadowplane/providers';

/** Bytes a judge template adds around the question and answers (instructions, markers, JSON); generous. */
const JUDGE_TEMPLATE_BYTES = 2000;
/**
 * Bytes assumed per judged output token (English prose averages about 4). An assumption, not a
 * bound: the judge runner reserves each call on its real request size, so the ledger's cap holds
 * whatever the answers' length; only this plan can be low for verbose non-Latin output.
 */
const ANSWER_BYTES_PER_TOKEN = 4;

/** The judge part of a dry run; see {@link judgeWorstCase}. */
export interface JudgeEstimate {
  provider: string;
  model: string;
  mode: 'pointwise' | 'pairwise';
  call_types: string[];
  /** judge calls per item (pointwise: incumbent + each candidate; pairwise: two orders per candidate) */
  calls_per_item: number;
  /** worst case of one item's judge calls, USD (basis estimate), or null without a rate card */
  per_item_worst_case_usd: number | null;
  /** per item × max_items × judged call types, USD; shown apart from the arms, never summed into them */
  judge_worst_case_usd: number | null;
  /** candidates whose pair the judge may not grade (same provider family), with the reason */
  refused_pairs: { candidate_arm_id: string; reason: string }[];
}

/**
 * Worst-case cost of the campaign's LLM judge (docs/architecture.md: shown apart in the dry run).
 * One judge call's request is at most the prompt (`promptBytes`), the judged answers (each its
 * arm's `max_output_tokens` × {@link ANSWER_BYTES_PER_TOKEN} bytes) and
 * {@link JUDGE_TEMPLATE_BYTES}; it writes at most the judge's `max_output_tokens`. Priced by the
 * judge runner's own reservation formula (libs/providers `attemptUpperBoundMicroUsd`: bytes as
 * input tokens at the highest input-side price). Same-family pairs (allowlist `family`, else the
 * provider id) are listed and cost nothing. Returns null when the spec has no judge.
 */
export function judgeWorstCase(
  spec: CampaignSpec,
  providers: readonly ProviderEntry[],
  promptBytes: number,
): JudgeEstimate | null {
  const j = spec.scorers.find((s): s is LlmJudgeSpec => s.kind === 'llm_judge');
  if (!j) return null;
  const family = (id: string) => providers.find((p) => p.id === id)?.family ?? id;
  const jf = family(j.provider);
  const incFam = family(spec.incumbent.provider);
  const refused = spec.candidates
    .filter((c) => jf === incFam || jf === family(c.provider))
    .map((c) => ({
      candidate_arm_id: c.id,
      reason: `same_family: judge family ${jf} equals the family of ${jf === incFam ? spec.incumbent.id : c.id}`,
    }));
  const allowed = spec.candidates.filter((c) => !refused.some((r) => r.candidate_arm_id === c.id));
  const outBytes = (a: { max_output_tokens: number }) => a.max_output_tokens * ANSWER_BYTES_PER_TOKEN;
  const calls: number[] = []; // request bytes of each judge call for one item
  if (j.mode === 'pointwise') {
    if (allowed.length > 0) calls.push(promptBytes + outBytes(spec.incumbent) + JUDGE_TEMPLATE_BYTES);
    for (const c of allowed) calls.push(promptBytes + outBytes(c) + JUDGE_TEMPLATE_BYTES);
  } else {
    for (const c of allowed)
      for (let k = 0; k < 2; k++)
        calls.push(promptBytes + outBytes(c) + outBytes(spec.incumbent) + JUDGE_TEMPLATE_BYTES);
  }
  const card = j.rate_card;
  const perItem = card
    ? calls.reduce((sum, bytes) => sum + attemptUpperBoundMicroUsd(bytes, j.max_output_tokens, card) / 1e6, 0)
    : null;
  const cts = j.call_types ? spec.call_types.filter((ct) => j.call_types!.includes(ct)) : spec.call_types;
  return {
    provider: j.provider,
    model: j.model,
    mode: j.mode,
    call_types: cts,
    calls_per_item: calls.length,
    per_item_worst_case_usd: perItem,
    judge_worst_case_usd: perItem === null ? null : perItem * spec.max_items * cts.length,
    refused_pairs: refused,
  };
}
