// Hot-path overhead, streaming (SSE): time to first byte (= the first event: TTFT) directly vs
// through the sidecar, paired per iteration at a constant arrival rate; thresholds on the added
// TTFT are the sidecar issue's targets (p50 ≤ 0.3 ms, p99 ≤ 1 ms). The whole-stream duration is
// recorded too (shadowplane_stream_total_*), without a threshold.
// Run: k6 run -e DIRECT_URL=… -e SIDECAR_URL=… [-e RATE=100 -e DURATION=30s] loadtests/k6/overhead-stream.js
import { Trend } from 'k6/metrics';
import { chatBody, pair, pairMetrics, scenario, summary, ADDED_P50_MS, ADDED_P99_MS } from './lib/common.js';

const ttft = pairMetrics('ttft');
const totalAdded = new Trend('shadowplane_stream_total_added_ms', true);
const BODY = chatBody(true);

export const options = {
  scenarios: scenario('stream'),
  thresholds: {
    shadowplane_ttft_added_ms: [`med<=${ADDED_P50_MS}`, `p(99)<=${ADDED_P99_MS}`],
    checks: ['rate>0.999'],
  },
  summaryTrendStats: ['med', 'p(90)', 'p(99)', 'count'],
};

export default function () {
  let directTotal = 0;
  pair('/v1/chat/completions', BODY, ttft, (t) => {
    // called direct first, then sidecar (see pair()); keep the whole-stream difference as well
    if (directTotal === 0) {
      directTotal = t.duration;
    } else {
      totalAdded.add(t.duration - directTotal);
    }
    return t.waiting;
  });
}

export function handleSummary(data) {
  return summary('overhead-stream', data);
}
