// The processes every overhead runner starts the same way: a private JetStream nats-server, the
// fast upstream, and a sidecar with the benchmark's flags. Loopback only; one place for their
// command lines so the runners measure the same sidecar.
import { startProc, type Proc } from './procs.js';

/** The sidecar binary, relative to the checkout a runner spawns it in (REPO or a base tree). */
export const SIDECAR_BIN = 'services/shadowplane/bin/shadowplane.mjs';

/**
 * Environment of every measured sidecar: warn-level logs (no per-request log lines in the CPU
 * figures) and a capture queue deep enough that a burst at 100% sampling is not dropped.
 */
export const BENCH_SIDECAR_ENV: Readonly<Record<string, string>> = Object.freeze({
  SHADOWPLANE_LOG_LEVEL: 'warn',
  SHADOWPLANE_SIDECAR_CAPTURE_QUEUE_MAX: '10000',
});

/**
 * Arguments after `node` for a benchmark sidecar: ephemeral listen and ops ports, `upstream`,
 * `natsUrl`, the NATS prefix (keeps concurrent arms' streams apart), sampling rate `sample`
 * ("0" … "1") and the suite name (default: the prefix).
 */
export function sidecarArgs(o: {
  upstream: string;
  natsUrl: string;
  prefix: string;
  sample: string;
  suite?: string;
}): string[] {
  return [
    SIDECAR_BIN,
    'sidecar',
    '--listen',
    '127.0.0.1:0',
    '--ops-listen',
    '127.0.0.1:0',
    '--upstream',
    o.upstream,
    '--nats',
    o.natsUrl,
    '--prefix',
    o.prefix,
    '--sample',
    o.sample,
    '--suite',
    o.suite ?? o.prefix,
  ];
}

/**
 * Starts `nats-server` (from PATH) with JetStream on 127.0.0.1:`port`, its store in `storeDir`,
 * pinned to `cpu`; resolves once the port accepts.
 */
export function startBenchNats(port: number, storeDir: string, cpu: string | undefined): Promise<Proc> {
  return startProc('nats-server', 'nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
    ...(cpu !== undefined ? { cpu } : {}),
    waitPort: port,
  });
}

/**
 * Starts loadtests/fast-upstream.ts on `port` (answers) and `capturePort` (what it received),
 * pinned to `cpu`; its `info` carries `url` and `capture_url`.
 */
export function startFastUpstream(port: number, capturePort: number, cpu: string | undefined): Promise<Proc> {
  return startProc(
    'upstream',
    process.execPath,
    ['--import', 'tsx', 'loadtests/fast-upstream.ts', String(port), String(capturePort)],
    cpu !== undefined ? { cpu } : {},
  );
}
