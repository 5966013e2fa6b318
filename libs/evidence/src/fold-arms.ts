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
  type CostBasis,
  type OutcomeRecord,
  type RunArmTimes,
  type RunRecord,
} from '@shadowplane/contracts';
import type { CostRows } from './fold-rows.js';
import type { ScoredIndex } from './fold-scored.js';
import { inc, majorityBasis, pct, share } from './fold-util.js';
import type { ObsTable } from './obs-table.js';

/** Stage 5 output: views in spec order (incumbent first), the run record's times. */
export interface CallTypeArms {
  arms: ArmView[];
  runTimes: RunRecord['call_types'][number];
}

/** Mean of the reported (non-null) values, summed in the order added (as reportedMean). */
class ReportedMean {
  private sum = 0;
  private n = 0;
  private nNull = 0;
  add(v: number | null): void {
    if (v === null) this.nNull++;
    else {
      this.sum += v;
      this.n++;
    }
  }
  get value(): { mean: number | null; n_reported: number; n_null: number } {
    return { mean: this.n ? this.sum / this.n : null, n_reported: this.n, n_null: this.nNull };
  }
}

/**
 * Stage 5 (pure but for `cost`, which each ok observation's cost evidence row is added to): arm
 * views and times of one call type. Each arm's observations are read in one or two passes over
 * their indexes, summing in scoring order: no per-arm filtered copies (at 100k items they were
 * ~1 MB arrays each, a few dozen per arm).
 */
export function armViews(p: {
  ct: string;
  spec: CampaignSpec;
  table: ObsTable;
  admitted: readonly string[];
  outcomesFor: ReadonlyMap<string, OutcomeRecord[]>;
  scored: ScoredIndex;
  aaCalls: number;
  cost: CostRows;
}): CallTypeArms {
  const { ct, spec, table, admitted, outcomesFor, scored, aaCalls, cost } = p;
  const c = table.n;
  const tasksClosed = (armId: string) => {
    let n = 0;
    for (const h of admitted)
      for (const oc of outcomesFor.get(`${h}|${armId}`) ?? []) if (oc.closes_task && oc.result !== 'fail') n++;
    return n;
  };
  const armView = (arm: CampaignSpec['incumbent'], role: 'incumbent' | 'candidate'): ArmView => {
    const all = scored.ofArm(arm.id, role);
    // pass 1: the majority basis among the priced ok calls
    const bases: CostBasis[] = [];
    for (const i of all) {
      const o = table.row(scored.rowAt(i));
      if (o.status !== 'ok') continue;
      const cb = o.cost;
      if (cb.usd !== null && cb.basis !== null) bases.push(cb.basis);
    }
    const basis = majorityBasis(bases);
    cost.startArm(ct, arm.id, basis);
    let ok = 0;
    let errs = 0;
    let abandoned = 0;
    let priced = 0;
    let onBasis = 0;
    let total = 0;
    let zeroMismatch = 0;
    let qSum = 0;
    let qN = 0;
    let cacheKnown = 0;
    let cacheHit = 0;
    const byClass: Record<string, number> = {};
    const tok = {
      input_uncached: new ReportedMean(),
      cache_read: new ReportedMean(),
      cache_write: new ReportedMean(),
      output: new ReportedMean(),
      reasoning: new ReportedMean(),
    };
    for (const i of all) {
      const row = scored.rowAt(i);
      const o = table.row(row);
      if (o.abandoned) abandoned++;
      if (o.status === 'error') {
        errs++;
        inc(byClass, o.error_class ?? 'unknown');
      }
      if (o.status !== 'ok') continue;
      ok++;
      cost.add(row);
      const oc = o.cost;
      if (oc.usd !== null && oc.basis !== null) {
        priced++;
        if (oc.basis === basis) {
          onBasis++;
          total += oc.usd;
        }
      }
      if (oc.reason === PROVIDER_ZERO_WITH_TOKENS) zeroMismatch++;
      const q = scored.qualityAt(i);
      if (q !== null) {
        qSum += q;
        qN++;
      }
      const u = o.usage;
      if (u.cache_read_input_tokens !== null) {
        cacheKnown++;
        if (u.cache_read_input_tokens > 0) cacheHit++;
      }
      // Cache reads and writes are parts of input: an unreported part (OpenAI has no cache
      // writes) adds nothing, as in the rate-card cost — so uncached input is known whenever
      // total input is, and null only when the provider did not report input at all.
      tok.input_uncached.add(
        u.input_tokens !== null
          ? u.input_tokens - (u.cache_read_input_tokens ?? 0) - (u.cache_creation_input_tokens ?? 0)
          : null,
      );
      tok.cache_read.add(u.cache_read_input_tokens);
      tok.cache_write.add(u.cache_creation_input_tokens);
      tok.output.add(u.output_tokens);
      tok.reasoning.add(u.reasoning_output_tokens);
    }
    const tasks = tasksClosed(arm.id);
    let status: ArmView['status'];
    if (ok === 0) status = 'missing';
    else if (qN === 0) status = 'unscored';
    else if (basis === null) status = 'unpriced';
    else if (basis === 'estimate') status = 'estimate_only';
    else if (ok < MIN_ARM_OBSERVATIONS || qN < MIN_ARM_OBSERVATIONS) status = 'insufficient';
    else status = 'measurable';
    return {
      arm_id: arm.id,
      role,
      provider: arm.provider,
      model: arm.model,
      status,
      observations: {
        total: all.length,
        ok,
        error: errs,
        abandoned,
        // A-A second calls carry their own arm id (the duplicator names them `<incumbent>__aa`): count them by role
        aa_second_calls: role === 'incumbent' ? aaCalls : 0,
      },
      error_share: share(errs, all.length),
      errors_by_class: Object.fromEntries(
        Object.keys(byClass)
          .sort()
          .map((k) => [k, share(byClass[k]!, all.length)]),
      ),
      cost: {
        basis,
        per_request_mean_usd: onBasis ? total / onBasis : null,
        total_usd: onBasis ? total : null,
        n_priced: onBasis,
        n_other_basis: priced - onBasis,
        n_unpriced: ok - priced,
        per_task_usd: tasks > 0 && onBasis && basis !== 'estimate' ? total / tasks : null,
        tasks_closed: tasks,
        n_provider_zero_mismatch: zeroMismatch,
      },
      tokens: {
        input_uncached: tok.input_uncached.value,
        cache_read: tok.cache_read.value,
        cache_write: tok.cache_write.value,
        output: tok.output.value,
        reasoning: tok.reasoning.value,
      },
      cache_hit_share: share(cacheHit, cacheKnown),
      quality: {
        mean: qN ? qSum / qN : null,
        n_scored: qN,
        n_unscored: ok - qN,
      },
    };
  };
  const arms: ArmView[] = [
    armView(spec.incumbent, 'incumbent'),
    ...spec.candidates.map((cd) => armView(cd, 'candidate')),
  ];
  // measured times of this run: into the run record, never the report
  const timesOf = (armId: string, role: RunArmTimes['role']): RunArmTimes => {
    const all = scored.ofArm(armId, role);
    const lat = new Float64Array(all.length);
    const ttft = new Float64Array(all.length);
    const skew = new Float64Array(all.length);
    let nl = 0;
    let nt = 0;
    let ns = 0;
    let retries = 0;
    for (const i of all) {
      const r = scored.rowAt(i);
      retries += Math.max(0, c.attempts[r]! - 1);
      if (table.row(r).status !== 'ok') continue;
      const l = c.latency_ms[r]!;
      const t = c.ttft_ms[r]!;
      if (!Number.isNaN(l)) lat[nl++] = l;
      if (!Number.isNaN(t)) ttft[nt++] = t;
      skew[ns++] = c.start_skew_ms[r]!;
    }
    return {
      arm_id: armId,
      role,
      latency_ms: pct(lat.subarray(0, nl)),
      ttft_ms: pct(ttft.subarray(0, nt)),
      start_skew_ms: pct(skew.subarray(0, ns)),
      retries,
    };
  };
  const aaArms = new Set<string>();
  for (let i = 0; i < scored.length; i++) {
    const o = table.row(scored.rowAt(i));
    if (o.role === 'incumbent_aa') aaArms.add(o.arm_id);
  }
  const runTimes = {
    call_type: ct,
    arms: [
      timesOf(spec.incumbent.id, 'incumbent'),
      ...spec.candidates.map((cd) => timesOf(cd.id, 'candidate')),
      ...[...aaArms].sort().map((id) => timesOf(id, 'incumbent_aa')),
    ],
  };
  return { arms, runTimes };
}
