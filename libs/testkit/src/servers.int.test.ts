import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as createConnection, createServer } from 'node:net';
import { freePort } from './ports.js';
import { startNatsServer } from '@shadowplane/stack';
import { startRedisServer } from './redis-server.js';
import { freezeProcess, thawProcess } from './freeze.js';

// The test servers must be the processes tests signal: a test that SIGSTOPs "its" nats-server
// while its clients talk to another one proves nothing and fails at random.
describe('test servers are the processes that listen', () => {
  it('nats-server: the handle names the port its own process reports, and a taken fixed port is an error, not another server', async () => {
    const a = await startNatsServer();
    try {
      expect(a.port).toBeGreaterThan(0);
      expect(a.url).toBe(`nats://127.0.0.1:${a.port}`);
      // the port a restart would reuse is held by a's process: the second start must fail, and
      // take its store dir with it
      const own = mkdtempSync(join(tmpdir(), 'shadowplane-testkit-'));
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = own; // os.tmpdir() reads it on each call: the failed start's dirs land here
      try {
        await expect(startNatsServer({ port: a.port })).rejects.toThrow(/exited/);
        expect(readdirSync(own)).toEqual([]);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
        rmSync(own, { recursive: true, force: true });
      }
      // freezing a's process freezes the port's listener (it accepts, but sends no INFO)
      await freezeProcess(a.process);
      try {
        const info = await firstBytes(a.port, 500);
        expect(info).toBe('');
      } finally {
        thawProcess(a.process);
      }
      expect(await firstBytes(a.port, 2000)).toMatch(/^INFO /);
    } finally {
      await a.stop();
    }
  });

  it('nats-server: a restart on a known port listens there again', async () => {
    const a = await startNatsServer();
    const port = a.port;
    await a.stop({ keepStore: true });
    const b = await startNatsServer({ port, storeDir: a.storeDir });
    try {
      expect(b.port).toBe(port);
      expect(await firstBytes(port, 2000)).toMatch(/^INFO /);
    } finally {
      await b.stop();
      rmSync(a.storeDir, { recursive: true, force: true }); // a reused store is the caller's to remove
    }
  });

  it('redis-server: the handle is the process that answers on its port', async () => {
    const r = await startRedisServer();
    try {
      const reply = await exchange(r.port, 'INFO server\r\n', /process_id:\d+/);
      expect(reply).toContain(`process_id:${r.process.pid}`);
    } finally {
      await r.stop();
    }
    expect(r.process.signalCode).toBe('SIGKILL');
  });

  it('redis-server: a port taken between choosing and binding is not mistaken for the server; the start moves to another port', async () => {
    // a listener that is not redis holds the first port offered: redis-server cannot bind it and
    // exits, while a connect probe to that port would succeed
    const squatter = createServer((s) => s.end('-ERR not redis\r\n'));
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const taken = (squatter.address() as { port: number }).port;
    const offered: number[] = [];
    try {
      const r = await startRedisServer({
        choosePort: async () => (offered.push(offered.length === 0 ? taken : await freePort()), offered.at(-1)!),
      });
      try {
        expect(offered[0]).toBe(taken);
        expect(offered.length).toBe(2);
        expect(r.port).toBe(offered[1]);
        expect(await exchange(r.port, 'INFO server\r\n', /process_id:\d+/)).toContain(`process_id:${r.process.pid}`);
      } finally {
        await r.stop();
      }
    } finally {
      squatter.close();
    }
  });
});

/** What 127.0.0.1:`port` sends first within `ms` ('' when nothing). */
function firstBytes(port: number, ms: number): Promise<string> {
  return exchange(port, null, /\r\n/, ms);
}

function exchange(port: number, send: string | null, until: RegExp, ms = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createConnection(port);
    let buf = '';
    const t = setTimeout(() => {
      s.destroy();
      resolve(buf);
    }, ms);
    s.once('connect', () => {
      if (send !== null) s.write(send);
    });
    s.on('data', (d: Buffer) => {
      buf += d.toString('latin1');
      if (until.test(buf)) {
        clearTimeout(t);
        s.destroy();
        resolve(buf);
      }
    });
    s.once('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
  });
}
