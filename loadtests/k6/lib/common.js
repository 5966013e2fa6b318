// Shared pieces of the Shadowplane k6 scenarios: targets, request shapes, the paired
// direct-vs-sidecar measurement and the summary writer. One script = one idea; see ../README.md.
import http from 'k6/http';
import { check } from 'k6';
import { Counter, Trend } from 'k6/metrics';

/** Base URLs (env): the upstream directly, and the same upstream through the sidecar. */
export const DIRECT_URL = __ENV.DIRECT_URL || 'http://127.0.0.1:4000';
export const SIDECAR_URL = __ENV.SIDECAR_URL || 'http://127.0.0.1:8080';
/** Iterations per second; each iteration sends one direct and one proxied request. */
export const RATE = Number(__ENV.RATE || 100);
export const DURATION = __ENV.DURATION || '30s';
export const OUT_DIR = __ENV.K6_OUT_DIR || 'loadtests/out';

/**
 * The hot-path targets from the sidecar issue, as k6 thresholds (ms): added p50 ≤ 0.3 ms,
 * added p99 ≤ 1 ms. Thresholds are the pass/fail contract of these scripts.
 */
export const ADDED_P50_MS = 0.3;
export const ADDED_P99_MS = 1;

const QUESTION =
  'Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the farmers market daily for $2 per fresh duck egg. How much in dollars does she make every day at the farmers market? ';

/** ~1 KB chat request body; streaming adds stream + include_usage. */
export function chatBody(stream) {
  const msg = {
    model: 'bench-model',
    messages: [
      { role: 'system', content: 'You are a careful math tutor. Answer with the final number after ####.' },
      { role: 'user', content: QUESTION.repeat(3) },
    ],
    max_tokens: 256,
  };
  return JSON.stringify(stream ? Object.assign(msg, { stream: true, stream_options: { include_usage: true } }) : msg);
}

export const PARAMS = { headers: { 'content-type': 'application/json', authorization: 'Bearer sk-k6-not-a-real-key' } };

/** Builds the open-model scenario (constant arrival rate) all scripts use. */
export function scenario(name) {
  return {
    [name]: {
      executor: 'constant-arrival-rate',
      rate: RATE,
      timeUnit: '1s',
      duration: DURATION,
      preAllocatedVUs: 20,
      maxVUs: 200,
    },
  };
}

/**
 * Metrics of one pair measurement. `pick` chooses the timing compared (duration for whole
 * responses, waiting = time to first byte for streams).
 */
export function pairMetrics(prefix) {
  return {
    added: new Trend(`shadowplane_${prefix}_added_ms`, true),
    direct: new Trend(`shadowplane_${prefix}_direct_ms`, true),
    sidecar: new Trend(`shadowplane_${prefix}_sidecar_ms`, true),
    captureQueued: new Counter('shadowplane_capture_queued'),
  };
}

/**
 * One paired measurement: the same request to the upstream directly and through the sidecar, in
 * random order, and the difference of the chosen timing as the sidecar's added latency.
 */
export function pair(path, body, m, pick) {
  const first = Math.random() < 0.5;
  const a = http.post(`${first ? DIRECT_URL : SIDECAR_URL}${path}`, body, PARAMS);
  const b = http.post(`${first ? SIDECAR_URL : DIRECT_URL}${path}`, body, PARAMS);
  const direct = first ? a : b;
  const sidecar = first ? b : a;
  const ok =
    check(direct, { 'direct 200': (r) => r.status === 200 }) &
    check(sidecar, { 'sidecar 200': (r) => r.status === 200, 'same body': (r) => r.body === direct.body });
  if (!ok) return;
  const d = pick(direct.timings);
  const s = pick(sidecar.timings);
  m.direct.add(d);
  m.sidecar.add(s);
  m.added.add(s - d);
  if (sidecar.headers['X-Shadow-Capture'] === 'queued') m.captureQueued.add(1);
}

/** Writes the machine-readable summary and a short text table of our metrics. */
export function summary(name, data) {
  const rows = [];
  for (const [k, v] of Object.entries(data.metrics)) {
    if (!k.startsWith('shadowplane_') || !v.values) continue;
    const vals = v.values;
    rows.push(
      `${k.padEnd(40)} ${['med', 'p(90)', 'p(99)', 'count']
        .filter((q) => vals[q] !== undefined)
        .map((q) => `${q}=${typeof vals[q] === 'number' ? vals[q].toFixed(q === 'count' ? 0 : 3) : vals[q]}`)
        .join('  ')}`,
    );
  }
  const failed = Object.entries(data.metrics)
    .filter(([, v]) => v.thresholds && Object.values(v.thresholds).some((t) => !t.ok))
    .map(([k]) => k);
  const text = `k6 ${name}: ${failed.length === 0 ? 'thresholds met' : `thresholds FAILED: ${failed.join(', ')}`}\n${rows.join('\n')}\n`;
  return { stdout: text, [`${OUT_DIR}/k6-${name}-summary.json`]: JSON.stringify(data, null, 2) };
}
