#!/usr/bin/env node
// Generates deploy/grafana/shadowplane.json, the Grafana dashboard for Shadowplane's metrics.
// Panels are data below; every metric a panel or an alert uses must be defined in a service's
// source (`name: 'shadowplane_...'`), which `--check` verifies (with the file being up to date).
//
// Usage: node deploy/tools/gen-dashboard.mjs [--check]
import { readFileSync, writeFileSync, readdirSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = join(root, 'deploy', 'grafana', 'shadowplane.json');

const NS = 'namespace=~"$namespace"';
const rows = [
  {
    title: 'Sidecar (hot path)',
    panels: [
      {
        title: 'Proxied requests/s by outcome',
        unit: 'reqps',
        exprs: [
          [`sum by (outcome) (rate(shadowplane_sidecar_requests_total{${NS}}[$__rate_interval]))`, '{{outcome}}'],
        ],
      },
      {
        title: 'Added latency (sidecar itself)',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.5, sum by (le) (rate(shadowplane_sidecar_added_latency_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p50',
          ],
          [
            `histogram_quantile(0.99, sum by (le) (rate(shadowplane_sidecar_added_latency_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p99',
          ],
        ],
      },
      {
        title: 'Capture fates/s (skipped, excluded, dropped, published)',
        unit: 'ops',
        exprs: [
          [
            `sum by (outcome) (rate(shadowplane_sidecar_captures_total{${NS}, outcome!~"not_sampled|queued"}[$__rate_interval]))`,
            '{{outcome}}',
          ],
        ],
      },
      {
        title: 'Dropped captures/s by reason',
        unit: 'ops',
        exprs: [
          [
            `sum by (reason) (rate(shadowplane_sidecar_captures_total{${NS}, outcome="dropped"}[$__rate_interval]))`,
            '{{reason}}',
          ],
        ],
      },
      {
        title: 'Skipped / excluded captures/s by reason',
        unit: 'ops',
        exprs: [
          [
            `sum by (outcome, reason) (rate(shadowplane_sidecar_captures_total{${NS}, outcome=~"skipped|excluded"}[$__rate_interval]))`,
            '{{outcome}}: {{reason}}',
          ],
        ],
      },
      {
        title: 'Capture queue',
        unit: 'short',
        exprs: [[`max by (pod) (shadowplane_sidecar_capture_queue_depth{${NS}})`, 'envelopes {{pod}}']],
      },
      {
        title: 'Bytes held by captures in flight',
        unit: 'bytes',
        exprs: [[`max by (pod) (shadowplane_sidecar_capture_bytes{${NS}})`, '{{pod}}']],
      },
      {
        title: 'Captures in flight (queued − excluded − dropped − published)',
        unit: 'short',
        exprs: [
          [
            `sum by (pod) (shadowplane_sidecar_captures_total{${NS}, outcome="queued"}) - sum by (pod) (shadowplane_sidecar_captures_total{${NS}, outcome=~"excluded|dropped|published"})`,
            '{{pod}}',
          ],
        ],
      },
      {
        title: 'Envelope builds/s by where (inline / worker thread)',
        unit: 'ops',
        exprs: [
          [`sum by (where) (rate(shadowplane_sidecar_capture_builds_total{${NS}}[$__rate_interval]))`, '{{where}}'],
        ],
      },
      {
        title: 'Seconds since last publish',
        unit: 's',
        exprs: [[`time() - max by (pod) (shadowplane_sidecar_last_publish_timestamp_seconds{${NS}} > 0)`, '{{pod}}']],
      },
      {
        title: 'NATS connected (min over pods)',
        unit: 'short',
        type: 'stat',
        exprs: [[`min(shadowplane_sidecar_nats_connected{${NS}})`, 'connected']],
      },
    ],
  },
  {
    title: 'Duplicator (shadow calls, budget)',
    panels: [
      {
        title: 'Arm calls/s by role and outcome',
        unit: 'ops',
        exprs: [
          [
            `sum by (arm_role, outcome) (rate(shadowplane_duplicator_dispatches_total{${NS}}[$__rate_interval]))`,
            '{{arm_role}} {{outcome}}',
          ],
        ],
      },
      {
        title: 'Provider attempts/s by result (retries included)',
        unit: 'ops',
        exprs: [
          [
            `sum by (result) (rate(shadowplane_duplicator_provider_attempts_total{${NS}}[$__rate_interval]))`,
            '{{result}}',
          ],
        ],
      },
      {
        title: 'Items/s by outcome',
        unit: 'ops',
        exprs: [
          [`sum by (outcome) (rate(shadowplane_duplicator_items_total{${NS}}[$__rate_interval]))`, '{{outcome}}'],
        ],
      },
      {
        title: 'Shadow spend (USD/h, settled)',
        unit: 'currencyUSD',
        exprs: [[`sum(rate(shadowplane_duplicator_spend_usd_total{${NS}}[$__rate_interval])) * 3600`, 'USD/h']],
      },
      {
        title: 'USD reserved for in-flight calls',
        unit: 'currencyUSD',
        exprs: [[`sum(shadowplane_duplicator_reserved_usd{${NS}})`, 'reserved']],
      },
      {
        title: 'Budget reservations/s by result',
        unit: 'ops',
        exprs: [
          [`sum by (result) (rate(shadowplane_duplicator_reservations_total{${NS}}[$__rate_interval]))`, '{{result}}'],
        ],
      },
      {
        title: 'Captures pending on campaign consumers (max over workers)',
        unit: 'short',
        exprs: [[`max(shadowplane_duplicator_consumer_lag_messages{${NS}})`, 'pending']],
      },
      {
        title: 'Rate-limit wait p50 / p99',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.5, sum by (le) (rate(shadowplane_duplicator_ratelimit_wait_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p50',
          ],
          [
            `histogram_quantile(0.99, sum by (le) (rate(shadowplane_duplicator_ratelimit_wait_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p99',
          ],
        ],
      },
      {
        title: 'Workers: campaigns consumed, paid_dispatch on',
        unit: 'short',
        exprs: [
          [`sum(shadowplane_duplicator_campaigns{${NS}})`, 'campaign consumers'],
          [`min(shadowplane_duplicator_paid_dispatch{${NS}})`, 'paid_dispatch (min over workers)'],
        ],
      },
      {
        title: 'Budget overcharges (must stay 0)',
        unit: 'short',
        type: 'stat',
        exprs: [[`sum(increase(shadowplane_duplicator_budget_overcharge_total{${NS}}[$__range]))`, 'overcharges']],
      },
      {
        title: 'Arms skipped at campaign start by reason',
        unit: 'short',
        type: 'bargauge',
        exprs: [
          [`sum by (reason) (increase(shadowplane_duplicator_arms_skipped_total{${NS}}[$__range]))`, '{{reason}}'],
        ],
      },
    ],
  },
  {
    title: 'Providers, models and arms (duplicator calls)',
    panels: [
      {
        title: 'Provider calls/s by provider and model',
        unit: 'ops',
        exprs: [
          [
            `sum by (provider, model) (rate(shadowplane_duplicator_provider_calls_total{${NS}}[$__rate_interval]))`,
            '{{provider}} {{model}}',
          ],
        ],
      },
      {
        title: 'Provider calls/s by arm and result',
        unit: 'ops',
        exprs: [
          [
            `sum by (arm, result) (rate(shadowplane_duplicator_provider_calls_total{${NS}}[$__rate_interval]))`,
            '{{arm}} {{result}}',
          ],
        ],
      },
      {
        title: 'Failed call share by model',
        unit: 'percentunit',
        exprs: [
          [
            `sum by (model) (rate(shadowplane_duplicator_provider_calls_total{${NS}, result!="ok"}[$__rate_interval])) / sum by (model) (rate(shadowplane_duplicator_provider_calls_total{${NS}}[$__rate_interval]))`,
            '{{model}}',
          ],
        ],
      },
      {
        title: 'Provider call duration p50 / p99 by model',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.5, sum by (le, model) (rate(shadowplane_duplicator_provider_call_duration_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p50 {{model}}',
          ],
          [
            `histogram_quantile(0.99, sum by (le, model) (rate(shadowplane_duplicator_provider_call_duration_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p99 {{model}}',
          ],
        ],
      },
      {
        title: 'Time to first token p50 / p99 by model',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.5, sum by (le, model) (rate(shadowplane_duplicator_provider_time_to_first_token_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p50 {{model}}',
          ],
          [
            `histogram_quantile(0.99, sum by (le, model) (rate(shadowplane_duplicator_provider_time_to_first_token_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p99 {{model}}',
          ],
        ],
      },
      {
        title: 'Time to first token p50 by arm',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.5, sum by (le, arm) (rate(shadowplane_duplicator_provider_time_to_first_token_seconds_bucket{${NS}}[$__rate_interval])))`,
            '{{arm}}',
          ],
        ],
      },
      {
        title: 'Tokens/s by model and token type',
        unit: 'short',
        exprs: [
          [
            `sum by (model, token_type) (rate(shadowplane_duplicator_provider_tokens_total{${NS}}[$__rate_interval]))`,
            '{{model}} {{token_type}}',
          ],
        ],
      },
      {
        title: 'Tokens/s by arm and token type',
        unit: 'short',
        exprs: [
          [
            `sum by (arm, token_type) (rate(shadowplane_duplicator_provider_tokens_total{${NS}}[$__rate_interval]))`,
            '{{arm}} {{token_type}}',
          ],
        ],
      },
      {
        title: 'Campaign budget used (spent / limit) by campaign',
        unit: 'percentunit',
        exprs: [
          [
            `max by (campaign) (shadowplane_duplicator_campaign_budget_spent_usd{${NS}}) / max by (campaign) (shadowplane_duplicator_campaign_budget_limit_usd{${NS}})`,
            'spent {{campaign}}',
          ],
          [
            `max by (campaign) (shadowplane_duplicator_campaign_budget_reserved_usd{${NS}}) / max by (campaign) (shadowplane_duplicator_campaign_budget_limit_usd{${NS}})`,
            'reserved {{campaign}}',
          ],
        ],
      },
    ],
  },
  {
    title: 'Control API',
    panels: [
      {
        title: 'Requests/s by route and status',
        unit: 'reqps',
        exprs: [
          [
            `sum by (route, status) (rate(shadowplane_control_http_requests_total{${NS}}[$__rate_interval]))`,
            '{{route}} {{status}}',
          ],
        ],
      },
      {
        title: 'Request latency p99 by route',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.99, sum by (le, route) (rate(shadowplane_control_http_request_duration_seconds_bucket{${NS}}[$__rate_interval])))`,
            '{{route}}',
          ],
        ],
      },
      {
        title: 'Campaign launches by outcome',
        unit: 'short',
        exprs: [
          [`sum by (outcome) (increase(shadowplane_control_campaign_launches_total{${NS}}[$__range]))`, '{{outcome}}'],
        ],
        type: 'bargauge',
      },
      {
        title: 'Campaign transitions by action',
        unit: 'short',
        exprs: [
          [
            `sum by (action, outcome) (increase(shadowplane_control_campaign_transitions_total{${NS}}[$__range]))`,
            '{{action}} {{outcome}}',
          ],
        ],
        type: 'bargauge',
      },
      {
        title: 'Auth failures/s',
        unit: 'ops',
        exprs: [
          [`sum by (reason) (rate(shadowplane_control_auth_failures_total{${NS}}[$__rate_interval]))`, '{{reason}}'],
        ],
      },
    ],
  },
  {
    title: 'Verdict',
    panels: [
      {
        title: 'OBS messages folded/s by kind',
        unit: 'ops',
        exprs: [[`sum by (kind) (rate(shadowplane_verdict_obs_messages_total{${NS}}[$__rate_interval]))`, '{{kind}}']],
      },
      {
        title: 'OBS messages failing the contract/s',
        unit: 'ops',
        exprs: [[`sum(rate(shadowplane_verdict_obs_invalid_total{${NS}}[$__rate_interval]))`, 'invalid']],
      },
      {
        title: 'Reports written by kind',
        unit: 'short',
        type: 'bargauge',
        exprs: [[`sum by (kind) (increase(shadowplane_verdict_reports_written_total{${NS}}[$__range]))`, '{{kind}}']],
      },
      {
        title: 'Fold time p50 / p99',
        unit: 's',
        exprs: [
          [
            `histogram_quantile(0.5, sum by (le) (rate(shadowplane_verdict_fold_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p50',
          ],
          [
            `histogram_quantile(0.99, sum by (le) (rate(shadowplane_verdict_fold_seconds_bucket{${NS}}[$__rate_interval])))`,
            'p99',
          ],
        ],
      },
      {
        title: 'Campaigns tracked',
        unit: 'short',
        type: 'stat',
        exprs: [[`max(shadowplane_verdict_campaigns{${NS}})`, 'campaigns']],
      },
    ],
  },
];

function panel(p, id, x, y) {
  const type = p.type ?? 'timeseries';
  return {
    id,
    type,
    title: p.title,
    datasource: { type: 'prometheus', uid: '${datasource}' },
    gridPos: { h: 8, w: 8, x, y },
    fieldConfig: { defaults: { unit: p.unit ?? 'short' }, overrides: [] },
    options:
      type === 'timeseries' ? { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } } : {},
    targets: p.exprs.map(([expr, legendFormat], i) => ({
      refId: String.fromCharCode(65 + i),
      expr,
      legendFormat,
      datasource: { type: 'prometheus', uid: '${datasource}' },
    })),
  };
}

export function buildDashboard() {
  const panels = [];
  let id = 1;
  let y = 0;
  for (const row of rows) {
    panels.push({
      id: id++,
      type: 'row',
      title: row.title,
      collapsed: false,
      gridPos: { h: 1, w: 24, x: 0, y },
      panels: [],
    });
    y += 1;
    row.panels.forEach((p, i) => {
      panels.push(panel(p, id++, (i % 3) * 8, y + Math.floor(i / 3) * 8));
    });
    y += Math.ceil(row.panels.length / 3) * 8;
  }
  return {
    uid: 'shadowplane',
    title: 'Shadowplane',
    description:
      'Shadow-duplicator data plane: sidecar hot path and captures, duplicator dispatch and budget, control API, verdicts. Generated by deploy/tools/gen-dashboard.mjs.',
    tags: ['shadowplane', 'llm'],
    schemaVersion: 39,
    version: 1,
    editable: true,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        { name: 'datasource', type: 'datasource', query: 'prometheus', label: 'Data source', current: {} },
        {
          name: 'namespace',
          type: 'query',
          label: 'Namespace',
          datasource: { type: 'prometheus', uid: '${datasource}' },
          query: { query: 'label_values(shadowplane_sidecar_requests_total, namespace)', refId: 'ns' },
          includeAll: true,
          multi: true,
          allValue: '.*',
          current: {},
          refresh: 2,
        },
      ],
    },
    annotations: { list: [] },
    panels,
  };
}

/** Every shadowplane_* metric defined in the services' and libs' sources (name: '...'). */
export function definedMetrics() {
  const names = new Set();
  const walk = (dir) => {
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      if (f === 'node_modules') continue;
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.ts$/.test(f) && !/\.test\.ts$/.test(f)) {
        for (const m of readFileSync(p, 'utf8').matchAll(/name:\s*['"`](shadowplane_[a-z0-9_]+)['"`]/g))
          names.add(m[1]);
      }
    }
  };
  for (const d of ['services', 'libs']) if (existsSync(join(root, d))) walk(join(root, d));
  return names;
}

/** shadowplane_* metric names an expression uses, with histogram/summary suffixes removed. */
export function usedMetrics(text) {
  const used = new Set();
  for (const m of text.matchAll(/\b(shadowplane_[a-z0-9_]+)/g)) used.add(m[1].replace(/_(bucket|sum|count)$/, ''));
  return used;
}

const text = JSON.stringify(buildDashboard(), null, 2) + '\n';
if (process.argv.includes('--check')) {
  let bad = 0;
  if (!existsSync(out) || readFileSync(out, 'utf8') !== text) {
    console.error(`${out} is out of date: run node deploy/tools/gen-dashboard.mjs`);
    bad++;
  }
  const defined = definedMetrics();
  const rules = readFileSync(join(root, 'helm', 'shadowplane', 'templates', 'prometheusrule.yaml'), 'utf8');
  const values = readFileSync(join(root, 'helm', 'shadowplane', 'values.yaml'), 'utf8');
  for (const [where, src] of [
    ['dashboard', text],
    ['prometheusrule.yaml', rules],
    ['values.yaml', values],
  ]) {
    for (const m of usedMetrics(src)) {
      if (!defined.has(m)) {
        console.error(`${where} uses ${m}, which no service defines`);
        bad++;
      }
    }
  }
  if (bad) process.exit(1);
  console.log(
    `dashboard up to date; every metric used by the dashboard, alerts and KEDA query is defined (${defined.size} metrics defined)`,
  );
} else {
  mkdirSync(join(root, 'deploy', 'grafana'), { recursive: true });
  writeFileSync(out, text);
  console.log(`wrote ${out}`);
}
