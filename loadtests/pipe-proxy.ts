// The floor any Node proxy sits on here: bytes piped between a client connection and its own
// upstream connection through node:net, no HTTP parsing at all (one upstream connection per
// client connection, as a TCP proxy). A reference arm for sidecar-bench.ts.
// Run: node --import tsx loadtests/pipe-proxy.ts <port> <upstream>
import { connect, createServer } from 'node:net';

const port = Number(process.argv[2] ?? 0);
const up = new URL(process.argv[3]!);

const server = createServer({ noDelay: true }, (client) => {
  const upstream = connect({ host: up.hostname, port: Number(up.port), noDelay: true });
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', role: 'pipe-proxy', url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`,
  );
});
process.on('SIGTERM', () => process.exit(0));
