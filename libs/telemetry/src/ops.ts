import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** Options for {@link serveOps}. */
export interface OpsServerOptions {
  /** readiness probe; `/readyz` answers 200 when true, 503 otherwise */
  ready: () => boolean;
  /** default 0 (an ephemeral port) */
  port?: number;
  /** default 127.0.0.1 */
  host?: string;
}

/** A running ops server. */
export interface OpsServer {
  server: Server;
  /** base URL, e.g. `http://127.0.0.1:39123` */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts a tiny HTTP server for operations: `GET /metrics` (Prometheus text from `registry`),
 * `GET /healthz` (200 while the process runs), `GET /readyz` (200/503 from `opts.ready`).
 * Anything else → 404 `{error:{code:'not_found',...}}`.
 */
export async function serveOps(registry: Registry, opts: OpsServerOptions): Promise<OpsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return json(405, { error: { code: 'method_not_allowed', message: 'GET only' } });
    if (path === '/metrics') {
      registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'content-type': registry.contentType });
          res.end(text);
        })
        .catch((e: unknown) =>
          json(500, { error: { code: 'internal', message: e instanceof Error ? e.message : String(e) } }),
        );
      return;
    }
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      let ok = false;
      try {
        ok = opts.ready();
      } catch {
        ok = false;
      }
      return json(ok ? 200 : 503, { status: ok ? 'ready' : 'not_ready' });
    }
    return json(404, { error: { code: 'not_found', message: 'No such resource.' } });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    url: `http://${host}:${addr.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
