// Server half of bench/provider-sim.ts: started pinned to one core (taskset) by the benchmark.
// `sim` = the provider sim with zero latency and limits out of the way; `baseline` = a bare
// node:http server answering every POST with one fixed chat.completion body (the floor any
// Node HTTP server pays). Prints {"event":"listening","url":...} on stdout.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_SIM_CONFIG, startProviderSim, type SimConfigInput } from '@shadowplane/provider-sim';

const arm = process.argv[2] ?? 'sim';

if (arm === 'baseline') {
  const body = JSON.stringify({
    id: 'chatcmpl-baseline',
    object: 'chat.completion',
    created: 1767225600,
    model: 'sim-medium',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'x '.repeat(300), refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 150, total_tokens: 160 },
  });
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(
      `${JSON.stringify({ event: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`,
    );
  });
} else {
  const base = DEFAULT_SIM_CONFIG as { models: Record<string, Record<string, unknown>> };
  const models = Object.fromEntries(
    Object.entries(base.models).map(([k, v]) => [
      k,
      { ...v, rate_limits: { rpm: 1_000_000_000, tpm: 1_000_000_000_000 } },
    ]),
  );
  const config = { ...DEFAULT_SIM_CONFIG, models, latency_scale: 0 } as SimConfigInput;
  const sim = await startProviderSim({ config, seed: 1 });
  process.stdout.write(`${JSON.stringify({ event: 'listening', url: sim.url })}\n`);
}

// exit cleanly on signals (lets --cpu-prof write its profile)
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => process.exit(0));
