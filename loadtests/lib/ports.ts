// Free loopback ports for the load-test processes.
import { createServer, type Server } from 'node:net';

/** Asks the OS for `n` distinct free TCP ports on 127.0.0.1 (all held until every one is known). */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = createServer();
    await new Promise<void>((r, j) => {
      s.once('error', j);
      s.listen(0, '127.0.0.1', () => r());
    });
    servers.push(s);
    ports.push((s.address() as { port: number }).port);
  }
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}
