// The CAS-safety check holds after reconnects: a client whose server is replaced by a release
// with the replicated-bucket CAS race (Debian's 2.9.10, where installed) is told so.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomPrefix, startNatsServer } from '@shadowplane/testkit';
import { connectBus, watchCasSafeServer } from './index.js';
import type { ShadowplaneError } from '@shadowplane/contracts';

const OLD = ['/usr/sbin/nats-server', '/usr/bin/nats-server'].find((p) => existsSync(p));

describe('watchCasSafeServer', () => {
  it.skipIf(OLD === undefined)(
    'reports nats_server_unsupported, naming the version, when the client reconnects to a 2.9 server',
    async () => {
      const current = await startNatsServer();
      const port = current.port;
      const bus = await connectBus({ url: current.url, name: 'version-watch', prefix: randomPrefix('ver') });
      const seen: ShadowplaneError[] = [];
      const unsafe = new Promise<void>((resolve) => {
        watchCasSafeServer(bus.nc, (e) => {
          seen.push(e);
          resolve();
        });
      });
      expect(bus.serverVersion).not.toMatch(/^2\.9\./);
      await current.stop();
      const dir = mkdtempSync(join(tmpdir(), 'shadowplane-old-nats-'));
      const old = spawn(OLD!, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
      try {
        await Promise.race([
          unsafe,
          new Promise((_, rej) => setTimeout(() => rej(new Error('no reconnect to the old server in 60 s')), 60_000)),
        ]);
        expect(seen[0]!.code).toBe('nats_server_unsupported');
        expect(seen[0]!.message).toMatch(/nats-server v?2\.9\.\d+ is older than 2\.10\.0/);
        expect(bus.nc.info?.version).toMatch(/^2\.9\./);
      } finally {
        await bus.close(1000);
        old.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});
