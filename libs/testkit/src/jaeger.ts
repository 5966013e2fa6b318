import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './ports.js';

/** The Jaeger v2 binary `make jaeger` builds from its Go module (override: `JAEGER_BIN`). */
export function jaegerBinary(): string {
  return process.env['JAEGER_BIN'] ?? resolve(import.meta.dirname, '../../../.bin/jaeger');
}

/** A span as Jaeger's query API (`/api/traces`) returns it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }>;
  tags: Array<{ key: string; type: string; value: unknown }>;
  processID: string;
}

/** A private Jaeger (all-in-one, in-memory storage) for tests. */
export interface JaegerHandle {
  /** OTLP/HTTP base URL, e.g. `http://127.0.0.1:43123` (POST `/v1/traces`) */
  readonly otlpHttpUrl: string;
  /** query API base URL, e.g. `http://127.0.0.1:43124` */
  readonly queryUrl: string;
  /** every span of every trace of `service` (query API `/api/traces`, up to `limit` traces) */
  spans(service: string, limit?: number): Promise<JaegerSpan[]>;
  /** SIGTERM, then SIGKILL after 5 s; removes its config */
  stop(): Promise<void>;
}

/**
 * Starts Jaeger v2 (`.bin/jaeger`) on free loopback ports with a minimal config: an OTLP/HTTP
 * receiver, memory storage and the query API, and waits until its health check answers.
 * @throws Error naming `make jaeger` when the binary is missing; Error when it is not healthy in `timeoutMs` (default 60,000)
 */
export async function startJaeger(opts: { timeoutMs?: number } = {}): Promise<JaegerHandle> {
  const bin = jaegerBinary();
  if (!existsSync(bin))
    throw new Error(`${bin} is missing: build it with \`make jaeger\` (Go module github.com/jaegertracing/jaeger)`);
  const [otlp, query, queryGrpc, health] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'jaeger-'));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: []
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${health}
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:${query}
    grpc:
      endpoint: 127.0.0.1:${queryGrpc}
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${otlp}
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`,
  );
  const child: ChildProcess = spawn(bin, ['--config', `file:${config}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (err.length < 16_384) err += d.toString();
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`jaeger exited with ${child.exitCode}: ${err.slice(-2000)}`);
    }
    const ok = await fetch(`http://127.0.0.1:${health}/status`).then(
      (r) => r.ok,
      () => false,
    );
    const q =
      ok &&
      (await fetch(`http://127.0.0.1:${query}/api/services`).then(
        (r) => r.ok,
        () => false,
      ));
    if (q) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`jaeger was not healthy within ${opts.timeoutMs ?? 60_000} ms: ${err.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const queryUrl = `http://127.0.0.1:${query}`;
  return {
    otlpHttpUrl: `http://127.0.0.1:${otlp}`,
    queryUrl,
    async spans(service, limit = 1000) {
      const r = await fetch(`${queryUrl}/api/traces?service=${encodeURIComponent(service)}&limit=${limit}&lookback=1h`);
      if (!r.ok) throw new Error(`jaeger query ${r.status}: ${await r.text()}`);
      const body = (await r.json()) as { data: Array<{ spans: JaegerSpan[] }> | null };
      return (body.data ?? []).flatMap((t) => t.spans);
    },
    stop,
  };
}
