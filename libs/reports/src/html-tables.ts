import type { ArmView, CallTypeReport, CampaignSpec, Comparison, RunArmTimes } from '@shadowplane/contracts';
import { basisLabel, counts, esc, iv, num, p5090, pct, pp, PROJECTION_DAYS, usd } from './html-format.js';

// The rows and sentences of the report page: arm and comparison table rows, verdict lines and the
// monthly projection.

/** "rate card from price catalogue <version> (<model>, listed <date> at <source>)" for an arm whose card came from the catalogue. */
function cardProvenance(spec: CampaignSpec | null, armId: string): string {
  const arm = spec ? [spec.incumbent, ...spec.candidates].find((x) => x.id === armId) : undefined;
  const f = arm?.rate_card_from;
  return f
    ? `<div class="basis card-from" data-catalogue="${esc(f.catalogue)}">rate card from price catalogue ${esc(f.catalogue)} (${esc(f.model)}, listed ${esc(f.as_of)} at ${esc(f.source)})</div>`
    : '';
}

/** One row of the arms table; run-record times (latency, TTFT, start skew) win over the report's. */
export function armRow(a: ArmView, times: RunArmTimes | undefined, spec: CampaignSpec | null = null): string {
  const t = a.tokens;
  const lat = times?.latency_ms ?? a.latency_ms;
  const ttft = times?.ttft_ms ?? a.ttft_ms;
  return `<tr data-arm="${esc(a.arm_id)}"><td>${esc(a.arm_id)}</td><td>${esc(a.role)}</td><td>${esc(a.provider)}/${esc(a.model)}</td><td>${esc(a.status)}</td>
<td>${a.observations.ok}/${a.observations.total} (abandoned ${a.observations.abandoned})</td>
<td>${pct(a.error_share.share)} [${pct(a.error_share.lower)}, ${pct(a.error_share.upper)}]${
    Object.keys(a.errors_by_class).length
      ? `<div class="basis">${Object.entries(a.errors_by_class)
          .map(([k, v]) => `${esc(k)} ${v.n}`)
          .join(', ')}</div>`
      : ''
  }</td>
<td>${usd(a.cost.per_request_mean_usd)} <span class="basis">${esc(basisLabel(a.cost.basis))}</span> (n=${a.cost.n_priced}, other basis ${a.cost.n_other_basis}, unpriced ${a.cost.n_unpriced})${a.cost.basis === 'rate_card' ? cardProvenance(spec, a.arm_id) : ''}</td>
<td>${a.cost.per_task_usd === null ? '— (no outcome closes a task)' : `${usd(a.cost.per_task_usd)} <span class="basis">${esc(basisLabel(a.cost.basis))}</span>`}</td>
<td>in ${num(t.input_uncached.mean, 1)} · cache read ${num(t.cache_read.mean, 1)} · cache write ${num(t.cache_write.mean, 1)} · out ${num(t.output.mean, 1)} · reasoning ${num(t.reasoning.mean, 1)}</td>
<td class="latency">${p5090(lat)}</td><td class="ttft">${p5090(ttft)}</td><td class="skew">${p5090(times?.start_skew_ms)}</td>
<td>${pct(a.cache_hit_share.share)}</td><td>${a.quality.mean === null ? 'unscored' : pct(a.quality.mean)} (scored ${a.quality.n_scored}, unscored ${a.quality.n_unscored})</td></tr>`;
}

/** A savings figure, always with its basis and the word projection. */
function savingsText(c: Comparison): string {
  const s = c.stats;
  if (!s?.cost_savings)
    return `savings not measurable${s?.cost_savings_null_reason ? ` (${esc(s.cost_savings_null_reason)})` : ''}`;
  return `projected savings ${iv(s.cost_savings, (x) => pct(x))} <span class="basis">per request, ${esc(basisLabel(c.basis))} basis; a projection from shadow calls, not realized savings</span>`;
}

/** A comparison state, with the reason (and have/need) when it cannot be measured. */
function stateText(c: Comparison): string {
  return c.state === 'CANNOT_MEASURE'
    ? `CANNOT_MEASURE (${esc(c.cannot_measure?.reason)}${c.insufficient ? `: have ${c.insufficient.have}, need ${c.insufficient.need}` : ''})`
    : c.state;
}

/** One row of the comparisons table. */
export function cmpRow(c: Comparison): string {
  const s = c.stats;
  return `<tr data-candidate="${esc(c.candidate_arm_id)}"><td>${esc(c.candidate_arm_id)}</td><td class="state">${stateText(c)}</td><td>${esc(c.decision ?? '—')}</td>
<td>${iv(s?.quality_delta, pp)}</td><td class="savings">${savingsText(c)}</td>
<td>${s ? `${pct(s.level)} (one-sided α per comparison ${s.alpha_one_sided_adjusted.toPrecision(3)} = α/K over ${s.candidates_k} candidates, run ${s.run_index}; B=${s.resamples}, seed ${s.seed})` : '—'}</td>
<td>${esc(c.trust_class ?? '—')}</td><td>${c.pairs.items} items / ${c.pairs.clusters} clusters; excluded: ${counts(c.pairs.excluded)}</td>
<td>${c.power_plan?.mde_pp == null ? '—' : `${c.power_plan.mde_pp.toFixed(2)} pp (${c.power_plan.sd_source === 'aa_pairs' ? 'spread from A-A pairs' : 'conservative prior spread'})`}</td>
<td>${c.remediation.map((r) => `<div class="remediation" data-code="${esc(r.code)}">${esc(r.text)}</div>`).join('')}${c.decision_reasons.map((r) => `<div class="reason">${esc(r)}</div>`).join('')}${c.judge_refused ? `<div class="judge-refused">${esc(c.judge_refused)}</div>` : ''}</td></tr>`;
}

/** One sentence per candidate and call type, from the structured comparison (never the bare headline). */
export function verdictLine(ct: CallTypeReport, c: Comparison, spec: CampaignSpec | null): string {
  const inc = ct.arms.find((a) => a.role === 'incumbent')?.arm_id ?? 'incumbent';
  const who = `<strong>${esc(ct.call_type)}: ${esc(c.candidate_arm_id)} vs ${esc(inc)}</strong>`;
  const s = c.stats;
  if (c.state === 'CANNOT_MEASURE' || !s)
    return `<li data-call-type="${esc(ct.call_type)}" data-candidate="${esc(c.candidate_arm_id)}">${who} — ${stateText(c)}: ${esc(c.cannot_measure?.detail ?? '')}${c.remediation[0] ? ` Next: ${esc(c.remediation[0].text)}.` : ''}</li>`;
  const word =
    c.decision === 'pass'
      ? `passes non-inferiority at −${esc(s.margin_pp)} pp`
      : c.decision === 'fail'
        ? 'fails'
        : 'is inconclusive';
  const floor =
    spec && spec.margins.min_savings > 0
      ? ` (pass needs the savings lower bound ≥ ${pct(spec.margins.min_savings, 0)})`
      : '';
  return `<li data-call-type="${esc(ct.call_type)}" data-candidate="${esc(c.candidate_arm_id)}">${who} — ${c.state}, ${word}; quality difference ${iv(s.quality_delta, pp)} at ${pct(s.level)}; ${savingsText(c)}${floor}; trust class ${esc(c.trust_class ?? '—')}.${c.decision !== 'pass' && c.remediation[0] ? ` Next: ${esc(c.remediation[0].text)}.` : ''}</li>`;
}

/**
 * The monthly projection rows: per call type and measured candidate, the requests observed in the
 * window scaled to {@link PROJECTION_DAYS} days, and the savings interval applied to the incumbent's
 * projected cost on the comparison's basis. Observed requests = Σ weights of admitted items (each
 * item counts 1 + its exact duplicates) + 1 per excluded item, divided by the campaign's
 * `sample_rate` (its own share of captured items). A projection, not a measurement.
 */
export function projectionRows(cts: CallTypeReport[], spec: CampaignSpec | null, hours: number | null): string[] {
  const rows: string[] = [];
  const sampleRate = spec?.sample_rate ?? 1;
  for (const ct of cts) {
    const inc = ct.arms.find((a) => a.role === 'incumbent');
    const observed = ct.dataset_card.total_weight + ct.dataset_card.exclusions.length;
    const perMonth = hours === null ? null : (observed / sampleRate) * ((PROJECTION_DAYS * 24) / hours);
    for (const c of ct.comparisons) {
      const sv = c.stats?.cost_savings ?? null;
      const incMean = inc && inc.cost.basis === c.basis ? inc.cost.per_request_mean_usd : null;
      const incMonth = perMonth !== null && incMean !== null ? perMonth * incMean : null;
      const cell = (f: number | undefined) => (incMonth !== null && f !== undefined ? usd(incMonth * f) : '—');
      rows.push(
        `<tr data-call-type="${esc(ct.call_type)}" data-candidate="${esc(c.candidate_arm_id)}"${incMonth !== null && sv ? ` data-savings-month-usd="${(incMonth * sv.point).toFixed(6)}"` : ''}><td>${esc(ct.call_type)}</td><td>${esc(c.candidate_arm_id)}</td><td>${observed}${sampleRate < 1 ? ` ÷ sample rate ${sampleRate}` : ''}</td><td>${perMonth === null ? '—' : Math.round(perMonth).toLocaleString('en-US')}</td><td>${incMonth === null ? '—' : usd(incMonth)} <span class="basis">${esc(basisLabel(c.basis))}</span></td><td class="projection">${sv ? `${cell(sv.point)} [${cell(sv.lower)}, ${cell(sv.upper)}] <span class="basis">projection</span>` : `— (${esc(c.stats?.cost_savings_null_reason ?? (c.state === 'CANNOT_MEASURE' ? 'cannot measure' : 'no savings interval'))})`}</td></tr>`,
      );
    }
  }
  return rows;
}
