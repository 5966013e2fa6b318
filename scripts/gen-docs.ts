/**
 * Generates the operator reference pages from the code, so they cannot drift:
 * - docs/configuration.md from each role's env zod schema (`.describe()` texts, defaults)
 * - docs/campaign-spec.md from the contracts `CampaignSpec` schema
 * - docs/metrics.md from the prom-client metric definitions in the sources
 * `npx tsx scripts/gen-docs.ts` writes them; `--check` exits 1 when a committed page differs
 * (test/docs.test.ts runs the check).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { z } from 'zod';
import { CampaignSpec, REGEX_MAX_PATTERN_CHARS, REGEX_MAX_PROGRAM_SIZE } from '@shadowplane/contracts';
import { CommonEnv } from '@shadowplane/config';
import { REPO_ROOT } from './lib/processes.js';
import { SidecarEnv } from '../services/sidecar/src/config-schema.js';
import { DuplicatorEnv } from '../services/duplicator/src/config.js';
import { ControlEnv } from '../services/control/src/config.js';
import { VerdictEnv } from '../services/verdict/src/config.js';

type JsonSchema = {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: unknown;
};

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function typeOf(s: JsonSchema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(' | ');
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.map(typeOf).join(' or ');
  if (s.type === 'array' && s.items) return `list of ${typeOf(s.items)}`;
  if (s.properties?.kind?.const !== undefined) return `\`kind: ${String(s.properties.kind.const)}\``;
  const t = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  return s.format ? `${t} (${s.format})` : t;
}

function constraints(s: JsonSchema): string {
  const c: string[] = [];
  if (s.minimum !== undefined) c.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) c.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined && s.maximum < Number.MAX_SAFE_INTEGER) c.push(`≤ ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) c.push(`< ${s.exclusiveMaximum}`);
  if (s.minLength !== undefined) c.push(`length ≥ ${s.minLength}`);
  if (s.maxLength !== undefined) c.push(`length ≤ ${s.maxLength}`);
  if (s.minItems !== undefined) c.push(`items ≥ ${s.minItems}`);
  if (s.maxItems !== undefined) c.push(`items ≤ ${s.maxItems}`);
  if (s.pattern && !s.format) c.push(`matches \`${s.pattern}\``);
  return c.join(', ');
}

function envTable(title: string, schema: z.ZodObject, only?: (key: string) => boolean): string {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const rows = Object.entries(js.properties ?? {})
    .filter(([k]) => (only ? only(k) : true))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, s]) => {
      // a default taken from the machine (the host name) is described, not printed
      const def =
        s.default === hostname()
          ? 'the host name'
          : s.default === undefined
            ? js.required?.includes(k)
              ? '**required**'
              : '—'
            : s.default === ''
              ? 'empty'
              : `\`${String(s.default)}\``;
      const desc = [s.description ?? '', constraints(s)].filter(Boolean).join('; ');
      return `| \`${k}\` | ${cell(def)} | ${cell(desc)} |`;
    });
  return `## ${title}\n\n| variable | default | meaning |\n|---|---|---|\n${rows.join('\n')}\n`;
}

function configurationPage(): string {
  const common = new Set(Object.keys(CommonEnv.shape));
  const notCommon = (k: string) => !common.has(k);
  return [
    '# Configuration reference',
    '',
    'Generated from the zod schemas each role parses its environment with (`npx tsx scripts/gen-docs.ts`; a test fails when this page drifts). A role that finds a bad value exits with code 78 and names every offending variable. Durations are in milliseconds, sizes in bytes, money in USD unless the name says otherwise.',
    '',
    envTable('Every role', CommonEnv),
    envTable('sidecar (`shadowplane sidecar`)', SidecarEnv, notCommon),
    envTable('duplicator (`shadowplane duplicator`)', DuplicatorEnv, notCommon),
    envTable('control (`shadowplane control`)', ControlEnv, notCommon),
    envTable('verdict (`shadowplane verdict`)', VerdictEnv, notCommon),
    '## provider-sim (`shadowplane provider-sim`)\n\nSee `npx shadowplane provider-sim --help` and [services/provider-sim/README.md](../services/provider-sim/README.md).\n',
  ].join('\n');
}

function specRows(s: JsonSchema, path: string, required: boolean, out: string[]): void {
  const alts = s.anyOf ?? s.oneOf;
  const objectAlt = alts?.find((a) => a.properties);
  if (s.properties && path !== '') {
    out.push(
      `| \`${path}\` | object | ${required ? 'yes' : 'no'} | ${s.default === undefined ? '—' : `\`${JSON.stringify(s.default)}\``} | ${cell(s.description ?? '')} |`,
    );
  }
  if (s.properties) {
    for (const [k, sub] of Object.entries(s.properties))
      specRows(sub, path ? `${path}.${k}` : k, s.required?.includes(k) ?? false, out);
    return;
  }
  if (s.type === 'array' && s.items?.properties) {
    out.push(
      `| \`${path}\` | list | ${required ? 'yes' : 'no'} | ${s.default === undefined ? '—' : `\`${JSON.stringify(s.default)}\``} | ${cell([s.description ?? '', constraints(s)].filter(Boolean).join('; '))} |`,
    );
    specRows(s.items, `${path}[]`, true, out);
    return;
  }
  if (objectAlt && !s.type) {
    specRows({ ...objectAlt, ...(s.default === undefined ? {} : { default: s.default }) }, path, required, out);
    return;
  }
  const def = s.default === undefined ? '—' : `\`${JSON.stringify(s.default)}\``;
  out.push(
    `| \`${path}\` | ${cell(typeOf(s))} | ${required ? 'yes' : 'no'} | ${cell(def)} | ${cell([s.description ?? '', constraints(s)].filter(Boolean).join('; '))} |`,
  );
}

function campaignSpecPage(): string {
  const js = z.toJSONSchema(CampaignSpec, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const rows: string[] = [];
  specRows(js, '', true, rows);
  const example = readFileSync(join(REPO_ROOT, 'examples', 'campaign.yaml'), 'utf8');
  return [
    '# Campaign spec',
    '',
    'What an operator submits to `POST /v1/campaigns` (or `shadowctl campaign create -f spec.yaml`). Generated from the contracts `CampaignSpec` zod schema (`npx tsx scripts/gen-docs.ts`). Unknown fields are refused with a 400 that names them; the spec is pinned at launch and never changes while the campaign runs. Money is USD, margins are percentage points of quality on a 0–100 scale, `min_savings` is a fraction (0.2 = 20% cheaper). Arms name provider ids from the operator allowlist — never URLs.',
    '',
    "Request options that are not part of the spec: `dry_run: true` returns the cost estimate, the power plan and per-call-type dispositions without writing anything; `require_power: true` refuses (422 `underpowered`) call types whose minimum detectable effect at `max_items` is larger than the margin. The plan is the √0.5 prior (no pairs exist before a campaign), inflated by the design effect of the frozen dataset card for a `frozen:<hash>` source; each row names its `sd_source` and `design_effect_source` (see statistics.md). Its `stopping[]` gives, per call type, the spend under the stopping rules: the worst case (the same for `fixed`, `sequential` and `group_sequential`, which can only stop earlier) and the expected paid items and dollars under `sequential` and under `group_sequential` (its planned looks every `stopping_batch_items` up to `max_items`; null when that plan would exceed 200 looks) in three simulated scenarios — every candidate clearly worse (−4 × margin), at the margin, and equal — from a seeded simulation of the verdict service's decision (for `group_sequential` with the Wald z of the simulated items in place of the score interval); `simulation.model` states what was assumed (the power plan's prior discordance, each candidate's rate-card cost ratio). Expected figures are a simulation, never a bound.\n\n`stopping: group_sequential` looks only at the planned looks n_k = k · `stopping_batch_items` (and `max_items`, the horizon), each against an exact O'Brien–Fleming-type α-spending boundary; it stops (state `decided`) once every candidate passed, failed or hit the non-binding futility rule. Its error guarantee holds for those planned looks, not for stopping at arbitrary times (that is `sequential`). `max_items / stopping_batch_items` may plan at most 200 looks (400 `invalid_request` naming `stopping_batch_items`); `instrument: replay` refuses it as it refuses `sequential`. See statistics.md \"Group-sequential stopping\".",
    '',
    '## Example',
    '',
    '```yaml',
    example.trimEnd(),
    '```',
    '',
    '## Fields',
    '',
    '| field | type | required | default | meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    '## Regular expressions (`kind: regex`)',
    '',
    `A \`regex\` scorer's \`pattern\` and a \`regex\` expectation's \`value\` (in \`expectations\` here, an \`x-shadow-expect\` header, the sidecar's configured expectations, an imported item's \`reference\` or a synthetic builder's expanded one) are RE2 syntax (https://github.com/google/re2/wiki/Syntax), matched anywhere in the output by re2js, in time linear in the output's length: no pattern can stall the verdict service the way a backtracking engine can. So there are no backreferences (\`\\1\`), no lookaround (\`(?=\`, \`(?!\`, \`(?<=\`, \`(?<!\`) and no JavaScript-only escapes such as \`\\u00e9\` (write \`\\x{e9}\`). There are no flags: \`.\` does not match a newline and \`^\`/\`$\` anchor the whole output unless an inline \`(?s)\`, \`(?m)\` or \`(?i)\` says otherwise; \`\\s\`, \`\\d\`, \`\\w\` and \`\\b\` are ASCII. A pattern is at most ${REGEX_MAX_PATTERN_CHARS} characters and compiles to at most ${REGEX_MAX_PROGRAM_SIZE} RE2 instructions (a counted repetition such as \`{1,1000}\` unrolls into about two per repeat). A spec that breaks this is refused with 400 \`invalid_request\` naming \`scorers.<i>.pattern\` or \`expectations.<i>.value\`. A campaign stored before this rule with a JavaScript-only pattern still reads and folds: that scorer or expectation gives no score (detail \`pattern refused: …\`), never a pass or a fail.`,
    '',
    '## The LLM judge (`kind: llm_judge`)',
    '',
    "Most traffic has no reference answer; a judge grades it. The judge is a provider from the operator allowlist (`provider`, `model`), called by the duplicator once an item's arms have settled, through the same provider adapters, the paid_dispatch gate and the campaign's budget ledger as the arms (its own rate limiter: `limits.rpm`, `limits.concurrency`). A verdict is published once per item on the OBS stream (`shadow.judge_verdict/v1`) and folded on every report without calling the judge again.",
    '',
    '| field | default | meaning |',
    '|---|---|---|',
    "| `mode` | `pointwise` | `pointwise`: each arm's output is graded 0–1 against the rubric; `pairwise`: each candidate is compared with the incumbent in both orders (candidate first, then incumbent first), ties allowed; the candidate's preference is the mean of the two orders, so a judge that always picks the first answer scores a tie |",
    '| `call_types` | all | call types the judge grades |',
    '| `rubric` | — | text added to the judge prompt |',
    "| `reference` | `none` | `expectation`: the item's first numeric or exact expectation is shown to a pointwise judge as the reference answer |",
    "| `weight` | `0.5` | the judge's share of the composite when programmatic scores or first-party outcomes exist for the same output; alone it has weight 1 |",
    '| `rate_card` | — | USD per million tokens; required to launch: each judge call reserves its worst case (prompt bytes as tokens + `max_output_tokens`) before it is made |',
    "| `max_output_tokens` | `256` | cap on the judge's reply |",
    '| `timeout_ms` | `30000` | a judge call with no byte for this long is a `judge_timeout` |',
    '| `template_version` | `v1` | the prompt template (`pointwise/v1`, `pairwise/v1` in libs/scoring); each verdict records its sha256 |',
    '',
    "Budget: the dry run reports the judge phase in `judge` (`judge_worst_case_usd`, calls per item, refused pairs) apart from the arm estimate — never summed into it. A launch whose `max_cost_usd` cannot cover one item's arms plus its judge calls at their worst case is refused with 422 `judge_phase_unaffordable` before anything is written. The report shows the judge's spend in `judge.spend_usd` (evaluation cost), never inside an arm's cost.",
    '',
    "Same family: a judge whose provider family (allowlist `family`, else the provider id) equals either arm's family is not used for that pair; the comparison names the refusal in `judge_refused` and the verdict carries `null_reason: same_family`.",
    '',
    "Failures: a judge timeout, error, refusal or unparsable reply leaves that output's judge score null with its reason (`judge_timeout`, `judge_error:<class>`, `judge_refused_reply`, `judge_unparsable`, `judge_budget_exhausted`, `judge_paid_dispatch_disabled`; `judge_lost_in_flight` when the duplicator worker died during the call, which is then charged its reserved bound and not made again; `judge_not_run:campaign_<state>` for a call the campaign stopped before), counted in `judge.null_scores` — never a 0.",
    '',
    "Calibration: the report's `judge` (and each call type's) gives Cohen's kappa between the judge and the programmatic scores / first-party outcomes on the same outputs (pointwise: good/bad at 0.5; pairwise: candidate better, worse or tie), with a 95% interval (standard error of Fleiss, Cohen & Everitt 1969), and the position-flip rate of pairwise judgements; or `kappa_none_reason`. Trust class follows the composite weights: A without judge, B when the judge has at most half the weight, C when it dominates; a class B or C verdict line carries the kappa or says why there is none.",
    '',
    "Evidence: each verdict's raw replies are kept encrypted in the artifact store (same retention as arm outputs) and named by `artifact_ref`; the parsed score rides on the OBS stream, so an offline fold (`shadowplane fold`) of the exported messages reproduces the judge-fed report. The evidence bundle carries the judge-fed paired qualities, the judge summary in the report, and a `judge` part with every verdict the fold used and the agreement rows behind the kappa (each naming its verdict); `shadowctl verify` checks each agreement row against its verdict and recomputes the judge summaries (counts, spend, kappa and its interval, position flips) from them. It does not recompute each composite quality from the judge and programmatic scores (the programmatic scores are not in the bundle): the statistics are rechecked from the paired rows.",
    '',
  ].join('\n');
}

interface MetricDef {
  name: string;
  type: string;
  help: string;
  labels: string[];
  file: string;
}

/** Finds prom-client metric definitions (`new Counter({ name: '...', help: '...', labelNames: [...] })`) in the sources. */
export function scanMetrics(): MetricDef[] {
  const out: MetricDef[] = [];
  for (const top of ['services', 'libs']) {
    for (const pkg of readdirSync(join(REPO_ROOT, top))) {
      const dir = join(REPO_ROOT, top, pkg, 'src');
      let files: string[] = [];
      try {
        files = readdirSync(dir, { recursive: true }) as string[];
      } catch {
        continue;
      }
      for (const f of files) {
        if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
        const text = readFileSync(join(dir, f), 'utf8');
        const re = /new (Counter|Gauge|Histogram|Summary)(?:<[^>]*>)?\(\s*\{([\s\S]*?)\}\s*\)/g;
        for (const m of text.matchAll(re)) {
          const body = m[2]!;
          const name = /name:\s*[`'"]([a-z_:]+)[`'"]/.exec(body)?.[1];
          if (!name?.startsWith('shadowplane_')) continue;
          const help = /help:\s*(['"`])((?:\\.|(?!\1).)*)\1/.exec(body)?.[2] ?? '';
          const labels = /labelNames:\s*\[([^\]]*)\]/.exec(body)?.[1]?.match(/[a-z_]+/g) ?? [];
          out.push({ name, type: m[1]!.toLowerCase(), help, labels, file: `${top}/${pkg}` });
        }
      }
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

function metricsPage(): string {
  const rows = scanMetrics().map(
    (m) => `| \`${m.name}\` | ${m.type} | ${m.labels.map((l) => `\`${l}\``).join(', ') || '—'} | ${cell(m.help)} |`,
  );
  return [
    '# Metrics',
    '',
    'Every role serves Prometheus metrics at `/metrics` (the sidecar on its ops port). Names follow `shadowplane_<role>_<thing>_<unit>`; times in seconds, sizes in bytes, counters end in `_total`; labels are small closed sets, never ids. Generated from the metric definitions in the sources (`npx tsx scripts/gen-docs.ts`). Each role also exports the prom-client default process metrics under their standard names (`process_cpu_seconds_total`, `nodejs_heap_size_used_bytes`, ...), so stock Node.js dashboards work; every metric of a role carries the label `role`.',
    '',
    '| metric | type | labels | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    '## Label bounds',
    '',
    '| label | values | bound |',
    '|---|---|---|',
    '| `role` | `sidecar`, `duplicator`, `control`, `verdict` | 4 |',
    '| `provider` | provider ids of the operator allowlist (`SHADOWPLANE_PROVIDERS_FILE`) | allowlist size; at most 64 per process, later values become `other` |',
    '| `model` | requested model of a campaign arm | at most 64 distinct per process, then `other` |',
    '| `arm` | arm id of a campaign spec (`[a-z0-9_-]`, ≤ 64 chars) | at most 64 distinct per process, then `other` |',
    '| `arm_role` | `incumbent`, `incumbent_aa`, `candidate` | 3 |',
    '| `mode` | `pointwise`, `pairwise` (LLM judge) | 2 |',
    '| `result`, `outcome` | `ok` or an error class of the contract (`rate_limited`, `hang_timeout`, `upstream_5xx`, `stream_cut`, ...) or the outcome list in the metric help | closed sets from the code |',
    '| `token_type` | `input`, `output`, `cache_read`, `cache_creation`, `reasoning` (cache and reasoning are parts of input and output) | 5 |',
    '| `campaign` | id of a campaign this worker consumes | present only while the campaign runs: the series is removed when it stops, so at most the running campaigns |',
    '| `reason`, `kind`, `where`, `action`, `api`, `fault`, `status`, `method`, `route` | fixed vocabularies in the code (route = route pattern or `unmatched`) | closed sets |',
    '',
    'Per-campaign budget gauges are read from the shared ledger, which holds integer micro-USD; each value is converted once per read, and `shadowplane_duplicator_reserved_usd` keeps its running total in integer micro-USD, so no gauge drifts below zero. Every worker of a campaign reports the same ledger: aggregate with `max by (campaign)`.',
    '',
    'Tracing (OpenTelemetry, OTLP) is configured by the standard `OTEL_*` variables and is off unless `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `SHADOWPLANE_OTLP_ENDPOINT`) is set (spans, attributes and how to see them: [tracing.md](tracing.md)); alerts and their runbooks are in [runbooks.md](runbooks.md).',
    '',
  ].join('\n');
}

/** The generated pages, by path relative to the repo root. */
export function generatedDocs(): Record<string, string> {
  return {
    'docs/configuration.md': configurationPage(),
    'docs/campaign-spec.md': campaignSpecPage(),
    'docs/metrics.md': metricsPage(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check');
  let drift = false;
  for (const [path, text] of Object.entries(generatedDocs())) {
    const full = join(REPO_ROOT, path);
    if (check) {
      let cur = '';
      try {
        cur = readFileSync(full, 'utf8');
      } catch {
        /* missing */
      }
      if (cur !== text) {
        console.error(`${path} is out of date: run npx tsx scripts/gen-docs.ts`);
        drift = true;
      }
    } else {
      writeFileSync(full, text);
      console.log(`wrote ${path}`);
    }
  }
  process.exitCode = drift ? 1 : 0;
}
