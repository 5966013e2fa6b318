import { createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP listener that speaks just enough of the NATS client protocol to let a client connect
 * (INFO with the given `version`, PONG to every PING) and nothing else: for testing what a role
 * does on a server version that cannot be run here (e.g. a 2.9.x with the replicated-bucket CAS
 * race). Any JetStream request would go unanswered.
 * @returns its `nats://127.0.0.1:<port>` URL and a close function
 */
export async function startFakeNatsInfo(version: string): Promise<{ url: string; close(): Promise<void> }> {
  const info = {
    server_id: 'FAKE',
    server_name: 'fake',
    version,
    proto: 1,
    go: 'go0',
    host: '127.0.0.1',
    port: 0,
    headers: true,
    max_payload: 1048576,
    jetstream: true,
  };
  const sockets = new Set<Socket>();
  const srv: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    s.write(`INFO ${JSON.stringify(info)}\r\n`);
    let buf = '';
    s.on('data', (d) => {
      buf += d.toString('latin1');
      let i;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (line.startsWith('PING')) s.write('PONG\r\n');
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return {
    url: `nats://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        srv.close(() => r());
      }),
  };
}
