// Throughput of the response parser on the recorded fixture streams, as ratios against a baseline
// measured in the same run: "split the text on newlines and JSON.parse every data: line" — the
// least work any SSE usage reader must do. Run on purpose (make bench-providers); never in `vitest run`.
//   SHADOWPLANE_BENCH_ROUNDS (default 7) interleaved rounds; SHADOWPLANE_BENCH_MS (default 300) per arm per round.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Api } from '@shadowplane/contracts';
import { createResponseParser, parseResponse } from '@shadowplane/providers';

const ROOT = fileURLToPath(new URL('../../../test/fixtures/providers/', import.meta.url));
const ROUNDS = Number(process.env['SHADOWPLANE_BENCH_ROUNDS'] ?? 7);
const MS = Number(process.env['SHADOWPLANE_BENCH_MS'] ?? 300);
const streams: Array<{ api: Api; bytes: Uint8Array }> = [
  { api: 'openai.chat', bytes: readFileSync(`${ROOT}openai/chat-stream-no-usage.sse`) },
  { api: 'openai.chat', bytes: readFileSync(`${ROOT}openai/chat-stream-include-usage-cached-1024.sse`) },
  { api: 'openai.responses', bytes: readFileSync(`${ROOT}openai/responses-stream-basic.sse`) },
  { api: 'anthropic.messages', bytes: readFileSync(`${ROOT}anthropic/stream-tool-use.sse`) },
  { api: 'openrouter.chat', bytes: readFileSync(`${ROOT}openrouter/chat-stream-cost.sse`) },
].map((s) => ({ api: s.api as Api, bytes: new Uint8Array(s.bytes) }));
const totalBytes = streams.reduce((n, s) => n + s.bytes.length, 0);
const meta = { status: 200, headers: { 'content-type': 'text/event-stream' } };

function chunked(size: number) {
  return () => {
    for (const s of streams) {
      const p = createResponseParser(s.api, meta, 0);
      for (let i = 0; i < s.bytes.length; i += size) p.push(s.bytes.subarray(i, i + size), i);
      p.end();
    }
  };
}

const arms: Record<string, () => void> = {
  baseline: () => {
    for (const s of streams) {
      const text = new TextDecoder().decode(s.bytes);
      for (const line of text.split('\n')) if (line.startsWith('data: {')) JSON.parse(line.slice(6));
    }
  },
  'parseResponse (whole body)': () => {
    for (const s of streams) parseResponse(s.api, meta, s.bytes);
  },
  'push 1460-byte chunks': chunked(1460),
  'push 64-byte chunks': chunked(64),
  'push 7-byte chunks': chunked(7),
};

// Warm-up (JIT), not measured.
for (const fn of Object.values(arms)) for (const t0 = performance.now(); performance.now() - t0 < MS;) fn();
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(arms).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 === 0 ? Object.keys(arms) : Object.keys(arms).reverse(); // interleave
  for (const name of order) {
    const fn = arms[name]!;
    // Throughput per CPU-second of this process (process.cpuUsage), not per wall second: the
    // machine is shared, and CPU time is far less disturbed by other processes than wall time.
    let n = 0;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    while (performance.now() - t0 < MS) {
      fn();
      n++;
    }
    const c = process.cpuUsage(c0);
    samples[name]!.push((n * totalBytes) / ((c.user + c.system) / 1e6) / 1e6); // MB per CPU-second
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => (Math.max(...xs) - Math.min(...xs)) / median(xs);
const base = median(samples['baseline']!);
console.log(
  `node ${process.version}, ${cpus().length}× ${cpus()[0]?.model ?? '?'}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; ${ROUNDS} rounds × ${MS} ms, ${streams.length} streams, ${totalBytes} bytes`,
);
console.log('| arm | median MB per CPU-s | ratio vs baseline | spread (max−min)/median |');
console.log('|---|---|---|---|');
for (const [name, xs] of Object.entries(samples))
  console.log(
    `| ${name} | ${median(xs).toFixed(1)} | ${(median(xs) / base).toFixed(2)} | ${(spread(xs) * 100).toFixed(0)}% |`,
  );
