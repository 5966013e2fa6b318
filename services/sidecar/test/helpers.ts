// Test helpers: a recording upstream on port 0, a raw HTTP client that keeps bytes and chunk
// timings, and a sidecar started on ephemeral ports with a silent logger.
import { createHash } from 'node:crypto';
import {
  createServer,
  request,
  type Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createLogger } from '@shadowplane/telemetry';
import { loadConfig, startSidecar, type SidecarConfig, type SidecarHandle } from '../src/index.js';

export const sha = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex');

/** What the upstream saw for one request. */
export interface SeenRequest {
  method: string;
  url: string;
  rawHeaders: string[];
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** performance.now() when the body ended */
  endedAt: number;
  /** true when the client side went away before the response finished */
  aborted: boolean;
}

export interface TestUpstream {
  url: string;
  seen: SeenRequest[];
  server: Server;
  close(): Promise<void>;
}

/**
 * Starts an HTTP upstream on 127.0.0.1:0. `handler` answers after the whole request body was read
 * (or, with `streaming: true`, right away with the body still arriving).
 */
export async function startUpstream(
  handler: (req: SeenRequest, res: ServerResponse, raw: IncomingMessage) => unknown,
): Promise<TestUpstream> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        headers: req.headers,
        body: Buffer.concat(chunks),
        endedAt: performance.now(),
        aborted: false,
      };
      seen.push(s);
      res.on('close', () => {
        if (!res.writableFinished) s.aborted = true;
      });
      void Promise.resolve(handler(s, res, req)).catch((e: unknown) => {
        res.destroy(e as Error);
      });
    });
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A response as the client received it: raw bytes (never decompressed) and chunk arrival times. */
export interface ClientResponse {
  status: number;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  chunkTimes: number[];
  /** the response ended cleanly ('end'); false when the connection was cut */
  complete: boolean;
  error: Error | null;
  reusedSocket: boolean;
  localPort: number | undefined;
}

export interface SendOptions {
  method?: string;
  path?: string;
  headers?: Record<string, string | string[]> | [string, string][];
  /** whole body (sent with content-length unless `chunked`) */
  body?: Buffer | string;
  /** body pieces written one by one without content-length (chunked transfer encoding) */
  chunks?: (Buffer | string)[];
  agent?: Agent | false;
  /** abort the request after this many response bytes */
  abortAfterBytes?: number;
}

/** Sends one request with node:http and records exactly what came back. Never rejects for HTTP-level failures. */
export function send(baseUrl: string, o: SendOptions = {}): Promise<ClientResponse> {
  const u = new URL(o.path ?? '/', baseUrl);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = Array.isArray(o.headers) ? {} : { ...(o.headers ?? {}) };
    if (o.body !== undefined && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length')) {
      headers['content-length'] = String(Buffer.byteLength(o.body));
    }
    let flat: string[] | null = null;
    if (Array.isArray(o.headers)) {
      // a raw header list goes out as given: add Host and Content-Length the way Node would
      const pairs = [...o.headers];
      if (!pairs.some(([k]) => k.toLowerCase() === 'host')) pairs.unshift(['Host', u.host]);
      if (o.body !== undefined && !pairs.some(([k]) => k.toLowerCase() === 'content-length'))
        pairs.push(['Content-Length', String(Buffer.byteLength(o.body))]);
      flat = pairs.flat();
    }
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: o.method ?? 'POST',
        headers: flat ?? headers,
        agent: o.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        const times: number[] = [];
        let bytes = 0;
        let settled = false;
        const finish = (complete: boolean, error: Error | null) => {
          if (settled) return;
          settled = true;
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body: Buffer.concat(chunks),
            chunkTimes: times,
            complete,
            error,
            reusedSocket: req.reusedSocket,
            localPort: req.socket?.localPort,
          });
        };
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          times.push(performance.now());
          bytes += c.byteLength;
          if (o.abortAfterBytes !== undefined && bytes >= o.abortAfterBytes) {
            req.destroy();
            finish(false, new Error('aborted by test'));
          }
        });
        res.on('end', () => finish(true, null));
        res.on('error', (e) => finish(false, e));
        res.on('close', () => finish(res.complete, res.complete ? null : new Error('closed before end')));
      },
    );
    req.on('error', reject);
    if (o.chunks) {
      const pieces = [...o.chunks];
      const next = () => {
        const p = pieces.shift();
        if (p === undefined) {
          req.end();
          return;
        }
        req.write(p);
        setTimeout(next, 5);
      };
      next();
    } else {
      req.end(o.body);
    }
  });
}

/** A logger that writes nothing. */
export const silentLogger = () => createLogger({ service: 'sidecar-test', version: 'test', level: 'silent' });

/**
 * Builds a sidecar config the way the binary does (flags + env), on ephemeral loopback ports.
 * @param flags extra flags, e.g. ['--sample', '1']
 * @param env extra SHADOWPLANE_* variables
 */
export function testConfig(
  upstream: string,
  natsUrl: string,
  prefix: string,
  flags: string[] = [],
  env: Record<string, string> = {},
): SidecarConfig {
  const r = loadConfig(
    [
      '--listen',
      '127.0.0.1:0',
      '--ops-listen',
      '127.0.0.1:0',
      '--upstream',
      upstream,
      '--nats',
      natsUrl,
      '--prefix',
      prefix,
      ...flags,
    ],
    { SHADOWPLANE_SIDECAR_PROVISION: 'true', SHADOWPLANE_SIDECAR_ID: 'sidecar-test', ...env },
  );
  if (r.kind !== 'config') throw new Error('unexpected help');
  return r.config;
}

/** Starts a sidecar with a silent logger. */
export function startTestSidecar(config: SidecarConfig, random?: () => number): Promise<SidecarHandle> {
  return startSidecar(config, {
    logger: silentLogger(),
    natsRetryMs: 200,
    natsConnectTimeoutMs: 500,
    ...(random ? { random } : {}),
  });
}

/** Reads one sample value from the sidecar's registry (0 when absent). */
export async function metricValue(
  h: SidecarHandle,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = h.registry.getSingleMetric(name);
  if (!m) return 0;
  const data = await m.get();
  let sum = 0;
  for (const v of data.values) {
    const l = v.labels as Record<string, string | number>;
    if (Object.entries(labels).every(([k, want]) => String(l[k]) === want)) {
      if ((v as { metricName?: string }).metricName === undefined || (v as { metricName?: string }).metricName === name)
        sum += v.value;
    }
  }
  return sum;
}

/** Polls `fn` until it returns true or `timeoutMs` passes. */
export async function waitFor(fn: () => boolean | Promise<boolean>, timeoutMs = 5000, stepMs = 20): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await fn()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
