/**
 * Fold stage 5 (per call type): the arm views (per shadow call, unweighted: counts, error shares,
 * cost on the arm's majority basis, tokens, cache hits, quality) with their cost evidence rows,
 * and the run's measured times per arm (latency, TTFT, start skew, retries) for the run record.
 */
import {
  MIN_ARM_OBSERVATIONS,
  PROVIDER_ZERO_WITH_TOKENS,
  type ArmView,
  type CampaignSpec,
  type OutcomeRecord,
  type RunArmTimes,
  type RunRecord,
} from '@shadowplane/contracts';
import type { CostRows } from './fold-rows.js';
import { inc, majorityBasis, pct, reportedMean, share, type ScoredIndex, type ScoredObs } from './fold-util.js';

/** Stage 5 output: views in spec order (incumbent first), the run record's times. */
export interface CallTypeArms {
  arms: ArmView[];
  runTimes: RunRecord['call_types'][number];
}

/** Stage 5 (pure but for `cost`, which each ok observation's cost evidence row is added to): arm views and times of one call type. */
export function armViews(p: {
  ct: string;
  spec: CampaignSpec;
  admitted: readonly string[];
  outcomesFor: ReadonlyMap<string, OutcomeRecord[]>;
  scored: ScoredIndex;
  armObs: (armId: string, role: 'incumbent' | 'candidate' | 'incumbent_aa') => ScoredObs[];
  aaCalls: number;
  cost: CostRows;
}): CallTypeArms {
  const { ct, spec, admitted, outcomesFor, scored, armObs, aaCalls, cost } = p;
  const tasksClosed = (armId: string) => {
    let n = 0;
    for (const h of admitted)
      for (const oc of outcomesFor.get(`${h}|${armId}`) ?? []) if (oc.closes_task && oc.result !== 'fail') n++;
    return n;
  };
  const armView = (arm: CampaignSpec['incumbent'], role: 'incumbent' | 'candidate'): ArmView => {
    const all = armObs(arm.id, role);
    const ok = all.filter((s) => s.obs.status === 'ok');
    const errs = all.filter((s) => s.obs.status === 'error');
    const priced = ok.filter((s) => s.obs.cost.usd !== null && s.obs.cost.basis !== null);
    const basis = majorityBasis(priced.map((s) => s.obs.cost.basis!));
    const onBasis = priced.filter((s) => s.obs.cost.basis === basis);
    cost.startArm(ct, arm.id, basis);
    for (const s of ok) cost.add(s.row);
    const total = onBasis.reduce((a, s) => a + s.obs.cost.usd!, 0);
    const tasks = tasksClosed(arm.id);
    const byClass: Record<string, number> = {};
    for (const s of errs) inc(byClass, s.obs.error_class ?? 'unknown');
    const q = ok.map((s) => s.composite?.quality ?? null);
    const qs = q.filter((x): x is number => x !== null);
    const cacheKnown = ok.filter((s) => s.obs.usage.cache_read_input_tokens !== null);
    let status: ArmView['status'];
    if (ok.length === 0) status = 'missing';
    else if (qs.length === 0) status = 'unscored';
    else if (basis === null) status = 'unpriced';
    else if (basis === 'estimate') status = 'estimate_only';
    else if (ok.length < MIN_ARM_OBSERVATIONS || qs.length < MIN_ARM_OBSERVATIONS) status = 'insufficient';
    else status = 'measurable';
    return {
      arm_id: arm.id,
      role,
      provider: arm.provider,
      model: arm.model,
      status,
      observations: {
        total: all.length,
        ok: ok.length,
        error: errs.length,
        abandoned: all.filter((s) => s.obs.abandoned).length,
        // A-A second calls carry their own arm id (the duplicator names them `<incumbent>__aa`): count them by role
        aa_second_calls: role === 'incumbent' ? aaCalls : 0,
      },
      error_share: share(errs.length, all.length),
      errors_by_class: Object.fromEntries(
        Object.keys(byClass)
          .sort()
          .map((k) => [k, share(byClass[k]!, all.length)]),
      ),
      cost: {
        basis,
        per_request_mean_usd: onBasis.length ? total / onBasis.length : null,
        total_usd: onBasis.length ? total : null,
        n_priced: onBasis.length,
        n_other_basis: priced.length - onBasis.length,
        n_unpriced: ok.length - priced.length,
        per_task_usd: tasks > 0 && onBasis.length && basis !== 'estimate' ? total / tasks : null,
        tasks_closed: tasks,
        n_provider_zero_mismatch: ok.filter((s) => s.obs.cost.reason === PROVIDER_ZERO_WITH_TOKENS).length,
      },
      tokens: {
        // Cache reads and writes are parts of input: an unreported part (OpenAI has no cache
        // writes) adds nothing, as in the rate-card cost — so uncached input is known whenever
        // total input is, and null only when the provider did not report input at all.
        input_uncached: reportedMean(
          ok.map((s) => {
            const u = s.obs.usage;
            return u.input_tokens !== null
              ? u.input_tokens - (u.cache_read_input_tokens ?? 0) - (u.cache_creation_input_tokens ?? 0)
              : null;
          }),
        ),
        cache_read: reportedMean(ok.map((s) => s.obs.usage.cache_read_input_tokens)),
        cache_write: reportedMean(ok.map((s) => s.obs.usage.cache_creation_input_tokens)),
        output: reportedMean(ok.map((s) => s.obs.usage.output_tokens)),
        reasoning: reportedMean(ok.map((s) => s.obs.usage.reasoning_output_tokens)),
      },
      cache_hit_share: share(
        cacheKnown.filter((s) => s.obs.usage.cache_read_input_tokens! > 0).length,
        cacheKnown.length,
      ),
      quality: {
        mean: qs.length ? qs.reduce((a, b) => a + b, 0) / qs.length : null,
        n_scored: qs.length,
        n_unscored: q.length - qs.length,
      },
    };
  };
  const arms: ArmView[] = [
    armView(spec.incumbent, 'incumbent'),
    ...spec.candidates.map((c) => armView(c, 'candidate')),
  ];
  // measured times of this run: into the run record, never the report
  const timesOf = (armId: string, role: RunArmTimes['role'], all: ScoredObs[]): RunArmTimes => {
    const ok = all.filter((s) => s.obs.status === 'ok');
    return {
      arm_id: armId,
      role,
      latency_ms: pct(ok.map((s) => s.obs.latency_ms).filter((x): x is number => x !== null)),
      ttft_ms: pct(ok.map((s) => s.obs.ttft_ms).filter((x): x is number => x !== null)),
      start_skew_ms: pct(ok.map((s) => s.obs.start_skew_ms)),
      retries: all.reduce((a, s) => a + Math.max(0, s.obs.attempts - 1), 0),
    };
  };
  const times = (arm: CampaignSpec['incumbent'], role: 'incumbent' | 'candidate'): RunArmTimes =>
    timesOf(arm.id, role, armObs(arm.id, role));
  const aaTimes: RunArmTimes[] = [];
  const aaByArm = new Map<string, ScoredObs[]>();
  for (const s of scored.all)
    if (s.obs.role === 'incumbent_aa') aaByArm.set(s.obs.arm_id, [...(aaByArm.get(s.obs.arm_id) ?? []), s]);
  for (const id of [...aaByArm.keys()].sort()) aaTimes.push(timesOf(id, 'incumbent_aa', aaByArm.get(id)!));
  const runTimes = {
    call_type: ct,
    arms: [times(spec.incumbent, 'incumbent'), ...spec.candidates.map((c) => times(c, 'candidate')), ...aaTimes],
  };
  return { arms, runTimes };
}
