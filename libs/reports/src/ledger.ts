/**
 * The call ledger and arm comparison of a campaign, from its exported observations: one row per
 * model call, a per-arm rollup with the never-completed share, its Wilson interval and a
 * two-proportion z-test of each arm against the incumbent (Holm-corrected over the arms), and a
 * per-upstream breakdown. Null stays null: a token count or cost the provider did not report is
 * null in every row and is never summed as 0. Pure; no I/O.
 */
import type { Observation } from '@shadowplane/contracts';
import { holm, quantileType7, twoProportionZ, wilsonInterval } from '@shadowplane/stats';

/**
 * One model call. `route` = the arm's requested `<provider>/<model>`; `upstream` = the upstream
 * the provider echoed (e.g. OpenRouter's serving provider), null when not echoed; `pin_honored`
 * true | false | null (no pin, or not echoed). Tokens as reported (null = not reported): prompt =
 * `input_tokens` (cached included), completion = `output_tokens` (reasoning included), cached =
 * `cache_read_input_tokens`, reasoning = `reasoning_output_tokens`. Cost in USD with its basis;
 * `charged_usd` is what the budget ledger settled for the call.
 */
export interface CallRow {
  started_at: string;
  campaign_id: string;
  call_type: string;
  item_hash: string;
  arm_id: string;
  role: Observation['role'];
  route: string;
  upstream: string | null;
  model_echo: string | null;
  pin_honored: boolean | null;
  status: 'ok' | 'error';
  http_status: number | null;
  error_class: string | null;
  attempts: number;
  latency_ms: number | null;
  ttft_ms: number | null;
  start_skew_ms: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: number | null;
  cost_basis: string | null;
  charged_usd: number;
  abandoned: boolean;
}

/**
 * Per-arm rollup (arm × role; A-A second calls of the incumbent are their own row).
 * - `never_completed`: calls with status error (no complete response: timeouts, cut streams, 5xx,
 *   429 after retries), with its share and 95% Wilson interval (null when no calls);
 * - cost: summed over ok calls priced on the arm's majority basis (`cost_basis`); calls priced on
 *   another basis and unpriced calls are counted (`cost_other_basis`, `cost_unpriced`), never blended;
 * - `cost_per_prompt_token_usd` = that cost ÷ Σ prompt tokens of the same calls (null when any of
 *   them lacks a reported prompt count, or none is priced);
 * - `cache_hit_share`: ok calls with cached tokens > 0 among ok calls that reported cached tokens;
 * - latency p50/p90 (type-7) over ok calls that reported latency, ms;
 * - `z_vs_incumbent` / `p_vs_incumbent`: pooled two-proportion z-test of the never-completed share
 *   against the incumbent's (positive z = this arm fails more often); `p_holm`: Holm-adjusted over
 *   every non-incumbent row. All three null on the incumbent's own row.
 */
export interface ArmRollup {
  arm_id: string;
  role: Observation['role'];
  route: string;
  calls: number;
  ok: number;
  never_completed: number;
  never_completed_share: number | null;
  never_completed_lower: number | null;
  never_completed_upper: number | null;
  abandoned: number;
  cost_basis: string | null;
  cost_usd: number | null;
  cost_priced_calls: number;
  cost_other_basis: number;
  cost_unpriced: number;
  cost_per_prompt_token_usd: number | null;
  charged_usd: number;
  cache_hit_share: number | null;
  latency_p50_ms: number | null;
  latency_p90_ms: number | null;
  distinct_upstreams: number;
  z_vs_incumbent: number | null;
  p_vs_incumbent: number | null;
  p_holm: number | null;
}

/** Calls of one arm through one echoed upstream (`--hosts`). */
export interface HostRollup {
  arm_id: string;
  role: Observation['role'];
  upstream: string | null;
  calls: number;
  never_completed: number;
  never_completed_share: number | null;
  pin_honored_true: number;
  pin_honored_false: number;
  pin_honored_null: number;
  latency_p50_ms: number | null;
}

/**
 * Whether the arms ran concurrently. `sequential` is true when some arm's activity window
 * [first start, last start] overlaps the incumbent's by less than half of the shorter window, or
 * its median start skew exceeds `skewBoundMs`. `arms` names the arms that tripped it and why.
 */
export interface ConcurrencyCheck {
  sequential: boolean;
  skew_bound_ms: number;
  arms: {
    arm_id: string;
    role: Observation['role'];
    overlap_share: number | null;
    median_start_skew_ms: number | null;
    why: string;
  }[];
}

/** What {@link buildLedger} returns. */
export interface Ledger {
  calls: CallRow[];
  arms: ArmRollup[];
  hosts: HostRollup[];
  concurrency: ConcurrencyCheck;
}

/** Median start skew (ms) above which arms are said not to have run concurrently. */
export const SEQUENTIAL_SKEW_MS = 500;

const p = (xs: number[], q: number): number | null =>
  xs.length ? quantileType7(Float64Array.from(xs).sort(), q) : null;
const keyOf = (o: Pick<Observation, 'arm_id' | 'role'>) => `${o.arm_id}|${o.role}`;

/** One ledger row for an observation. */
export function callRow(o: Observation): CallRow {
  return {
    started_at: o.started_at,
    campaign_id: o.campaign_id,
    call_type: o.call_type,
    item_hash: o.item_hash,
    arm_id: o.arm_id,
    role: o.role,
    route: `${o.provider}/${o.model}`,
    upstream: o.upstream,
    model_echo: o.model_echo,
    pin_honored: o.pin_honored,
    status: o.status,
    http_status: o.http_status,
    error_class: o.error_class,
    attempts: o.attempts,
    latency_ms: o.latency_ms,
    ttft_ms: o.ttft_ms,
    start_skew_ms: o.start_skew_ms,
    prompt_tokens: o.usage.input_tokens,
    completion_tokens: o.usage.output_tokens,
    cached_tokens: o.usage.cache_read_input_tokens,
    reasoning_tokens: o.usage.reasoning_output_tokens,
    cost_usd: o.cost.usd,
    cost_basis: o.cost.basis,
    charged_usd: o.charged_micro_usd / 1e6,
    abandoned: o.abandoned,
  };
}

function majority(bases: string[]): string | null {
  const order = ['provider_reported', 'rate_card', 'estimate'];
  let best: string | null = null;
  let bestN = 0;
  for (const b of order) {
    const n = bases.filter((x) => x === b).length;
    if (n > bestN) [best, bestN] = [b, n];
  }
  return best;
}

/**
 * Builds the ledger from observations (other OBS messages are ignored by the caller). Rows are
 * sorted by start time, then arm; rollups by role (incumbent first), then arm id.
 * Sources: Wilson (1927) and the pooled two-proportion z-test as in libs/stats; Holm (1979),
 * "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6(2), 65–70.
 * @param opts.skewBoundMs median start skew above which arms count as sequential (default {@link SEQUENTIAL_SKEW_MS})
 */
export function buildLedger(observations: readonly Observation[], opts: { skewBoundMs?: number } = {}): Ledger {
  const skewBound = opts.skewBoundMs ?? SEQUENTIAL_SKEW_MS;
  const calls = observations
    .map(callRow)
    .sort((a, b) =>
      a.started_at < b.started_at
        ? -1
        : a.started_at > b.started_at
          ? 1
          : keyOf(a) < keyOf(b)
            ? -1
            : keyOf(a) > keyOf(b)
              ? 1
              : 0,
    );
  const groups = new Map<string, CallRow[]>();
  for (const c of calls) {
    const g = groups.get(keyOf(c));
    if (g) g.push(c);
    else groups.set(keyOf(c), [c]);
  }
  const roleRank = { incumbent: 0, incumbent_aa: 1, candidate: 2 } as const;
  const ordered = [...groups.values()].sort(
    (a, b) => roleRank[a[0]!.role] - roleRank[b[0]!.role] || (a[0]!.arm_id < b[0]!.arm_id ? -1 : 1),
  );
  const inc = ordered.find((g) => g[0]!.role === 'incumbent') ?? null;
  const failures = (g: CallRow[]) => g.filter((c) => c.status === 'error').length;
  const arms: ArmRollup[] = ordered.map((g) => {
    const first = g[0]!;
    const ok = g.filter((c) => c.status === 'ok');
    const nc = failures(g);
    const [lo, hi] = g.length ? wilsonInterval(nc, g.length, 0.95) : [null, null];
    const priced = ok.filter((c) => c.cost_usd !== null && c.cost_basis !== null);
    const basis = majority(priced.map((c) => c.cost_basis!));
    const onBasis = priced.filter((c) => c.cost_basis === basis);
    const cost = onBasis.length ? onBasis.reduce((a, c) => a + c.cost_usd!, 0) : null;
    const prompt = onBasis.every((c) => c.prompt_tokens !== null)
      ? onBasis.reduce((a, c) => a + c.prompt_tokens!, 0)
      : null;
    const cacheKnown = ok.filter((c) => c.cached_tokens !== null);
    const lat = ok.map((c) => c.latency_ms).filter((x): x is number => x !== null);
    let z: number | null = null;
    let pv: number | null = null;
    if (inc && g !== inc && inc.length > 0 && g.length > 0)
      ({ z, pTwoSided: pv } = twoProportionZ(nc, g.length, failures(inc), inc.length));
    return {
      arm_id: first.arm_id,
      role: first.role,
      route: first.route,
      calls: g.length,
      ok: ok.length,
      never_completed: nc,
      never_completed_share: g.length ? nc / g.length : null,
      never_completed_lower: lo,
      never_completed_upper: hi,
      abandoned: g.filter((c) => c.abandoned).length,
      cost_basis: basis,
      cost_usd: cost,
      cost_priced_calls: onBasis.length,
      cost_other_basis: priced.length - onBasis.length,
      cost_unpriced: ok.length - priced.length,
      cost_per_prompt_token_usd: cost !== null && prompt !== null && prompt > 0 ? cost / prompt : null,
      charged_usd: g.reduce((a, c) => a + c.charged_usd * 1e6, 0) / 1e6,
      cache_hit_share: cacheKnown.length
        ? cacheKnown.filter((c) => c.cached_tokens! > 0).length / cacheKnown.length
        : null,
      latency_p50_ms: p(lat, 0.5),
      latency_p90_ms: p(lat, 0.9),
      distinct_upstreams: new Set(g.map((c) => c.upstream).filter((u) => u !== null)).size,
      z_vs_incumbent: z,
      p_vs_incumbent: pv,
      p_holm: null,
    };
  });
  const tested = arms.filter((a) => a.p_vs_incumbent !== null);
  holm(tested.map((a) => a.p_vs_incumbent!)).forEach((adj, i) => (tested[i]!.p_holm = adj));

  const hostGroups = new Map<string, CallRow[]>();
  for (const c of calls) {
    const k = `${keyOf(c)}|${c.upstream ?? '\u0000'}`;
    const g = hostGroups.get(k);
    if (g) g.push(c);
    else hostGroups.set(k, [c]);
  }
  const hosts: HostRollup[] = [...hostGroups.values()]
    .map((g) => {
      const f = g[0]!;
      const nc = failures(g);
      return {
        arm_id: f.arm_id,
        role: f.role,
        upstream: f.upstream,
        calls: g.length,
        never_completed: nc,
        never_completed_share: nc / g.length,
        pin_honored_true: g.filter((c) => c.pin_honored === true).length,
        pin_honored_false: g.filter((c) => c.pin_honored === false).length,
        pin_honored_null: g.filter((c) => c.pin_honored === null).length,
        latency_p50_ms: p(
          g.filter((c) => c.status === 'ok' && c.latency_ms !== null).map((c) => c.latency_ms!),
          0.5,
        ),
      };
    })
    .sort(
      (a, b) =>
        roleRank[a.role] - roleRank[b.role] ||
        (a.arm_id < b.arm_id ? -1 : a.arm_id > b.arm_id ? 1 : (a.upstream ?? '') < (b.upstream ?? '') ? -1 : 1),
    );

  return { calls, arms, hosts, concurrency: concurrencyCheck(ordered, inc, skewBound) };
}

function concurrencyCheck(groups: CallRow[][], inc: CallRow[] | null, skewBound: number): ConcurrencyCheck {
  const span = (g: CallRow[]) => {
    const t = g.map((c) => Date.parse(c.started_at)).sort((a, b) => a - b);
    return [t[0]!, t[t.length - 1]!] as const;
  };
  const out: ConcurrencyCheck['arms'] = [];
  const incSpan = inc ? span(inc) : null;
  for (const g of groups) {
    if (g === inc) continue;
    const f = g[0]!;
    const med = p(
      g.map((c) => c.start_skew_ms),
      0.5,
    );
    let overlap: number | null = null;
    if (incSpan) {
      const s = span(g);
      const shorter = Math.min(s[1] - s[0], incSpan[1] - incSpan[0]);
      const inter = Math.max(0, Math.min(s[1], incSpan[1]) - Math.max(s[0], incSpan[0]));
      // a window of one instant (one call) overlaps when it lies inside the other
      overlap = shorter > 0 ? inter / shorter : s[0] >= incSpan[0] && s[0] <= incSpan[1] ? 1 : 0;
    }
    const whys: string[] = [];
    if (overlap !== null && overlap < 0.5)
      whys.push(`its calls overlap the incumbent's in time by ${(overlap * 100).toFixed(0)}% (< 50%)`);
    if (med !== null && med > skewBound) whys.push(`median start skew ${med.toFixed(0)} ms > ${skewBound} ms`);
    if (whys.length)
      out.push({
        arm_id: f.arm_id,
        role: f.role,
        overlap_share: overlap,
        median_start_skew_ms: med,
        why: whys.join('; '),
      });
  }
  return { sequential: out.length > 0, skew_bound_ms: skewBound, arms: out };
}
