// Hot-path overhead, non-streaming: the same ~1 KB chat request to the upstream directly and
// through the sidecar, paired per iteration at a constant arrival rate; thresholds on the added
// latency are the sidecar issue's targets (p50 ≤ 0.3 ms, p99 ≤ 1 ms).
// Run: k6 run -e DIRECT_URL=… -e SIDECAR_URL=… [-e RATE=100 -e DURATION=30s] loadtests/k6/overhead-json.js
import { chatBody, pair, pairMetrics, scenario, summary, ADDED_P50_MS, ADDED_P99_MS } from './lib/common.js';

const m = pairMetrics('json');
const BODY = chatBody(false);

export const options = {
  scenarios: scenario('json'),
  thresholds: {
    shadowplane_json_added_ms: [`med<=${ADDED_P50_MS}`, `p(99)<=${ADDED_P99_MS}`],
    checks: ['rate>0.999'],
  },
  summaryTrendStats: ['med', 'p(90)', 'p(99)', 'count'],
};

export default function () {
  pair('/v1/chat/completions', BODY, m, (t) => t.duration);
}

export function handleSummary(data) {
  return summary('overhead-json', data);
}
