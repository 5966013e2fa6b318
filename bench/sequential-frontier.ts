/**
 * How many paid items any stopping rule can save on a truly equal candidate at equal power: the
 * limit behind the "clearly equal" rows of `make bench-sequential`, in the normal limit of the
 * paired comparison (a Brownian motion in information units). Written to docs/statistics.md
 * between the sequential-frontier markers.
 *
 * Units: information as a fraction of the fixed-n rule's items n_f; the fixed-n test at one-sided
 * α_adj has power p when the drift is θ = z_{1−α} + z_p (per unit of n_f). Per power p:
 *  - the least expected sample size of ANY test with type-I ≤ α_adj at the margin and power ≥ p
 *    at θ: Wald's SPRT of θ = 0 vs θ, optimal for E_θ(N) among all such tests (Wald & Wolfowitz
 *    1948) and exact for Brownian motion (no overshoot):
 *    E_θ(N)/n_f = 2[p·ln(p/α) + (1 − p)·ln((1 − p)/(1 − α))] / (z_{1−α} + z_p)²;
 *  - group-sequential designs over K equal looks with the error-spending families of Lan & DeMets
 *    (O'Brien–Fleming-type, Pocock-type) and Kim & DeMets (α·t^ρ), boundaries by Monte Carlo on
 *    null paths, with Shadowplane's non-binding futility rule (conditional power of the last look
 *    below 10% both to pass under θ and to fail under the trend), the horizon R·n_f raised until
 *    the power is p again (equal power), and at R = 1 (Shadowplane's horizon: max_items);
 *  - the rule Shadowplane runs (`group_sequential`: O'Brien–Fleming-type, that futility, R = 1).
 *
 * Run: `npm run bench:sequential-frontier` (`-- --write` replaces the table). Env: FRONTIER_LOOKS
 * (16: the bench's singleton plan, 400 items every 25), FRONTIER_PATHS (100000 per estimate),
 * FRONTIER_SEED (29). Seeded; about a minute.
 */
import { writeDocSection } from './lib/doc-section.js';
import {
  GROUP_SEQUENTIAL_FUTILITY_POWER,
  conditionalPower,
  createNormalRng,
  intervalLevel,
  normCdf,
  normPpf,
} from '@shadowplane/stats';

const LOOKS = Number(process.env.FRONTIER_LOOKS ?? 16);
const PATHS = Number(process.env.FRONTIER_PATHS ?? 100_000);
const NULL_PATHS = 5 * PATHS;
const SEED = Number(process.env.FRONTIER_SEED ?? 29);
const POWERS = [0.545, 0.78, 0.935, 0.99];

const { alphaAdjusted: ALPHA } = intervalLevel({ alphaOneSided: 0.05, candidates: 1, runIndex: 1 });
const Z_ALPHA = normPpf(1 - ALPHA);

/** Cumulative α spent by information fraction t ∈ (0, 1]. */
type Spending = (t: number) => number;
const FAMILIES: [string, Spending][] = [
  ["O'Brien–Fleming-type (Shadowplane)", (t) => 2 * normCdf(-normPpf(1 - ALPHA / 2) / Math.sqrt(t))],
  ['α·t³', (t) => ALPHA * t ** 3],
  ['α·t²', (t) => ALPHA * t ** 2],
  ['α·t^1.5', (t) => ALPHA * t ** 1.5],
  ['α·t', (t) => ALPHA * t],
  ['Pocock-type', (t) => ALPHA * Math.log(1 + (Math.E - 1) * t)],
];

/** Critical values c_1..c_K on the Z scale for K equal looks, by Monte Carlo on null paths. */
function boundaries(spend: Spending, seed: number): number[] {
  const g = createNormalRng(seed);
  const b = new Float64Array(NULL_PATHS);
  const alive = new Uint8Array(NULL_PATHS).fill(1);
  const critical: number[] = [];
  let spent = 0;
  for (let k = 1; k <= LOOKS; k++) {
    const t = k / LOOKS;
    const z: number[] = [];
    for (let i = 0; i < NULL_PATHS; i++) {
      b[i]! += Math.sqrt(1 / LOOKS) * g();
      if (alive[i]) z.push(b[i]! / Math.sqrt(t));
    }
    const m = Math.round((spend(t) - spent) * NULL_PATHS);
    spent = spend(t);
    z.sort((x, y) => y - x);
    const c = m > 0 ? z[m - 1]! : (z[0] ?? 0) + 1;
    critical.push(c);
    for (let i = 0; i < NULL_PATHS; i++) if (alive[i] && b[i]! / Math.sqrt(t) >= c) alive[i] = 0;
  }
  return critical;
}

/** Power and expected items (fraction of n_f) of a design with horizon R·n_f under drift θ. */
function operate(critical: number[], horizon: number, theta: number, paths: number, seed: number) {
  const g = createNormalRng(seed);
  const cK = critical[LOOKS - 1]!;
  let pass = 0;
  let items = 0;
  for (let j = 0; j < paths; j++) {
    let b = 0;
    let s = 0;
    let stop = horizon;
    for (let k = 1; k <= LOOKS; k++) {
      const sk = (horizon * k) / LOOKS;
      b += theta * (sk - s) + Math.sqrt(sk - s) * g();
      s = sk;
      const z = b / Math.sqrt(sk);
      if (z >= critical[k - 1]! || z <= -critical[k - 1]!) {
        if (z > 0) pass++;
        stop = sk;
        break;
      }
      if (k < LOOKS) {
        // the rule's futility test (libs/stats conditionalPower), in units of the horizon
        const t = sk / horizon;
        const cpPass = conditionalPower({ z, t, drift: theta * Math.sqrt(horizon), finalCritical: cK });
        const cpFail = conditionalPower({ z: -z, t, drift: -(b / sk) * Math.sqrt(horizon), finalCritical: cK });
        if (cpPass < GROUP_SEQUENTIAL_FUTILITY_POWER && cpFail < GROUP_SEQUENTIAL_FUTILITY_POWER) {
          stop = sk;
          break;
        }
      }
    }
    items += stop;
  }
  return { power: pass / paths, items: items / paths };
}

/** Wald–Wolfowitz: the least E_θ(N)/n_f of any test with type-I α and power p (SPRT, exact for Brownian motion). */
function sprtExpectedFraction(alpha: number, p: number): number {
  const za = normPpf(1 - alpha);
  const zp = normPpf(p);
  return (2 * (p * Math.log(p / alpha) + (1 - p) * Math.log((1 - p) / (1 - alpha)))) / (za + zp) ** 2;
}

function main(): void {
  const started = performance.now();
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const crit = FAMILIES.map(([, f], i) => boundaries(f, SEED * 1000 + i));
  const lines = [
    `Normal limit, α_adj ${pct(ALPHA)} one-sided, ${LOOKS} equal looks, ${PATHS} paths per estimate (boundaries from ${NULL_PATHS} null paths), seed ${SEED}; items as a fraction of the fixed-n rule's, saving = 1 − fraction`,
    '',
    "| fixed-n power | least possible, any test (SPRT) | best spending family at equal power (horizon) | Shadowplane's rule at equal power (horizon) | Shadowplane's rule at max_items: power / items |",
    '|---|---|---|---|---|',
  ];
  for (const p of POWERS) {
    const theta = Z_ALPHA + normPpf(p);
    const equal = crit.map((c, i) => {
      let lo = 1;
      let hi = 2;
      for (let it = 0; it < 10; it++) {
        const mid = (lo + hi) / 2;
        if (operate(c, mid, theta, PATHS / 2, SEED + it).power < p) lo = mid;
        else hi = mid;
      }
      const horizon = (lo + hi) / 2;
      return { family: FAMILIES[i]![0], horizon, ...operate(c, horizon, theta, PATHS, SEED + 77) };
    });
    const best = equal.reduce((a, b) => (b.items < a.items ? b : a));
    const own = operate(crit[0]!, 1, theta, PATHS, SEED + 99);
    const sprt = sprtExpectedFraction(ALPHA, p);
    lines.push(
      `| ${pct(p)} | ${sprt.toFixed(3)} (saves ${pct(1 - sprt)}) | ${best.items.toFixed(3)} (saves ${pct(1 - best.items)}; ${best.family}, ${best.horizon.toFixed(2)}·n_f) | ${equal[0]!.items.toFixed(3)} (saves ${pct(1 - equal[0]!.items)}; ${equal[0]!.horizon.toFixed(2)}·n_f) | ${pct(own.power)} / ${own.items.toFixed(3)} (saves ${pct(1 - own.items)}) |`,
    );
    console.error(`  power ${pct(p)} done (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  lines.push('', `Wall time ${((performance.now() - started) / 1000).toFixed(0)} s.`);
  const table = lines.join('\n');
  console.log(table);
  if (process.argv.includes('--write')) writeDocSection('statistics.md', 'sequential-frontier', table);
}

main();
