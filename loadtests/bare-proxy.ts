// A bare node:http server + undici Pool proxy, streaming both ways, hop-by-hop headers dropped,
// nothing else (no sampling, no metrics, no capture): what a Node proxy on the standard stack
// costs. A reference arm for sidecar-bench.ts (the floor of any Node proxy is pipe-proxy.ts). Run: node --import tsx loadtests/bare-proxy.ts <port> <upstream>
import { createServer } from 'node:http';
import { pipeline } from 'node:stream';
import { Pool } from 'undici';

const port = Number(process.argv[2] ?? 0);
const pool = new Pool(process.argv[3]!, { connections: 1024, pipelining: 1 });
const HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'proxy-connection',
  'trailer',
  'host',
  'expect',
]);

const server = createServer((req, res) => {
  const headers: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    if (!HOP.has(req.rawHeaders[i]!.toLowerCase())) headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  pool.request({ path: req.url ?? '/', method: req.method as 'POST', headers, body: hasBody ? req : null }).then(
    (up) => {
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) out[k] = v;
      res.writeHead(up.statusCode, out);
      pipeline(up.body, res, () => undefined);
    },
    () => {
      res.writeHead(502);
      res.end();
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', role: 'bare-proxy', url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`,
  );
});
process.on('SIGTERM', () => process.exit(0));
