import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { fixture, KEYS, validSpec, type Fixture } from '@shadowplane/control/testing';
import { hashApiKey, loadApiKeys } from '@shadowplane/control';
import { main } from '../src/index.js';

const BIN = fileURLToPath(new URL('../bin/shadowctl.mjs', import.meta.url));

class Sink extends Writable {
  text = '';
  isTTY = false;
  override _write(c: Buffer, _e: BufferEncoding, cb: () => void) {
    this.text += c.toString();
    cb();
  }
}

describe('shadowctl against a live control API', () => {
  let f: Fixture;
  let url = '';
  let dir = '';
  const run = async (key: string | null, ...args: string[]) => {
    const out = new Sink();
    const err = new Sink();
    const code = await main(['--url', url, ...(key ? ['--api-key', key] : []), ...args], {
      out: out as unknown as NodeJS.WriteStream,
      err: err as unknown as NodeJS.WriteStream,
    });
    return { code, out: out.text, err: err.text };
  };
  beforeAll(async () => {
    f = await fixture();
    url = await f.app.listen({ host: '127.0.0.1', port: 0 });
    dir = mkdtempSync(join(tmpdir(), 'shadowctl-'));
    writeFileSync(join(dir, 'spec.yaml'), toYaml(validSpec()));
    writeFileSync(join(dir, 'bad.yaml'), toYaml(validSpec({ max_cost_usd: -1 })));
    writeFileSync(join(dir, 'broken.yaml'), 'name: [unclosed');
  });
  afterAll(async () => f.close());

  it('flags paid-dispatch on needs admin: 77 with a read key, 0 with an admin key', async () => {
    const denied = await run(KEYS.read, 'flags', 'paid-dispatch', 'on');
    expect(denied.code).toBe(77);
    expect(denied.err).toMatch(/forbidden/);
    const ok = await run(KEYS.admin, 'flags', 'paid-dispatch', 'on', '--reason', 'launch window');
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/^paid_dispatch on \(by admin at .*: launch window\)/);
  });

  it('campaign create --dry-run prints the plan; --json gives the API answer', async () => {
    const text = await run(KEYS.write, 'campaign', 'create', '-f', join(dir, 'spec.yaml'), '--dry-run');
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/dry run: would launch/);
    expect(text.out).toMatch(/solve: runnable/);
    const json = await run(KEYS.write, '--json', 'campaign', 'create', '-f', join(dir, 'spec.yaml'), '--dry-run');
    expect(JSON.parse(json.out)).toMatchObject({ dry_run: true, run_index: 1 });
  });

  it('launches, lists, gets, stops; a stopped campaign cannot resume (exit 1, conflict)', async () => {
    const created = await run(KEYS.write, '--json', 'campaign', 'create', '-f', join(dir, 'spec.yaml'));
    expect(created.code).toBe(0);
    const id = JSON.parse(created.out).campaign.id as string;
    const list = await run(KEYS.read, 'campaign', 'list');
    expect(list.out).toContain(id);
    const get = await run(KEYS.read, 'campaign', 'get', id);
    expect(get.out).toMatch(/spend: \$0 settled \+ \$0 reserved of \$12.5/);
    expect((await run(KEYS.write, 'campaign', 'stop', id)).out.trim()).toBe(`${id} stopped`);
    const resume = await run(KEYS.write, 'campaign', 'resume', id);
    expect([resume.code, resume.err]).toEqual([1, expect.stringMatching(/conflict/)]);
  });

  it('maps refusals to exit codes: 65 invalid spec, 65 unparsable file, 66 missing file, 69 unreachable, 77 no key, 64 usage', async () => {
    expect((await run(KEYS.write, 'campaign', 'create', '-f', join(dir, 'bad.yaml'))).code).toBe(65);
    expect((await run(KEYS.write, 'campaign', 'create', '-f', join(dir, 'broken.yaml'))).code).toBe(65);
    expect((await run(KEYS.write, 'campaign', 'create', '-f', join(dir, 'nope.yaml'))).code).toBe(66);
    expect((await run(null, 'campaign', 'list')).code).toBe(77);
    expect((await run(KEYS.read, 'campaign', 'frobnicate')).code).toBe(64);
    const out = new Sink();
    const unreachable = await main(['--url', 'http://127.0.0.1:1', '--api-key', KEYS.read, 'campaign', 'list'], {
      out: out as unknown as NodeJS.WriteStream,
      err: out as unknown as NodeJS.WriteStream,
    });
    expect(unreachable).toBe(69);
    expect(out.text).toContain('cannot reach the control API at http://127.0.0.1:1: bad port'); // fetch refuses port 1 itself
    // a port nobody listens on: said in words with the system code, never as the bare "(TypeError)" of fetch
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const closed = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    await new Promise((r) => srv.close(r));
    const refused = new Sink();
    expect(
      await main(['--url', closed, '--api-key', KEYS.read, 'campaign', 'list'], {
        out: refused as unknown as NodeJS.WriteStream,
        err: refused as unknown as NodeJS.WriteStream,
      }),
    ).toBe(69);
    expect(refused.text).toContain(`cannot reach the control API at ${closed}: connection refused (ECONNREFUSED)`);
    expect(refused.text).toContain('is `shadowplane control` running there');
    expect(refused.text + out.text).not.toContain('TypeError');
  });

  it('the flag off makes a live launch exit 69 (503 paid_dispatch_disabled)', async () => {
    await f.setFlag(false);
    const r = await run(KEYS.write, 'campaign', 'create', '-f', join(dir, 'spec.yaml'));
    expect([r.code, r.err]).toEqual([69, expect.stringMatching(/paid_dispatch_disabled/)]);
    await f.setFlag(true);
  });

  it('outcome add records once, reports a retry as already recorded, and refuses a score without a value (65)', async () => {
    const id = JSON.parse((await run(KEYS.write, '--json', 'campaign', 'create', '-f', join(dir, 'spec.yaml'))).out)
      .campaign.id as string;
    const args = [
      'outcome',
      'add',
      '--campaign',
      id,
      '--item-hash',
      'e'.repeat(64),
      '--arm',
      'medium',
      '--result',
      'score',
      '--score',
      '0.7',
      '--source',
      'ci:eval',
    ];
    const first = await run(KEYS.outcome, ...args);
    expect([first.code, first.out]).toEqual([0, expect.stringMatching(/^outcome [0-9a-f]{64} recorded/)]);
    expect((await run(KEYS.outcome, ...args)).out).toMatch(/already recorded/);
    const noScore = await run(
      KEYS.outcome,
      'outcome',
      'add',
      '--item-hash',
      'e'.repeat(64),
      '--result',
      'score',
      '--source',
      'ci',
    );
    expect([noScore.code, noScore.err]).toEqual([65, expect.stringMatching(/invalid_request/)]);
    expect((await run(KEYS.outcome, 'outcome', 'add', '--result', 'maybe', '--source', 'ci')).code).toBe(64);
  });

  it('keys new prints a list item the control API keys file accepts as is, with the key it hashes', async () => {
    const made = await run(null, 'keys', 'new', '--id', 'ci', '--scopes', 'campaign:read,admin');
    expect(made.code).toBe(0);
    const key = /^key: (\S+)$/m.exec(made.out)![1]!;
    const yamlPart = made.out.slice(made.out.indexOf('- id:'));
    const file = join(dir, 'api-keys.yaml');
    writeFileSync(file, yamlPart);
    const entries = loadApiKeys(file); // the control API's own loader
    expect(entries).toEqual([{ id: 'ci', hash: hashApiKey(key), scopes: ['campaign:read', 'admin'] }]);
    const bad = await run(null, 'keys', 'new', '--scopes', 'campaign:read,root');
    expect([bad.code, bad.err]).toEqual([
      64,
      expect.stringMatching(/--scopes takes campaign:read, campaign:write, outcome:write, admin/),
    ]);
  });

  it('keys new prints a key whose hash keys hash reproduces', async () => {
    const made = JSON.parse(
      (await run(null, '--json', 'keys', 'new', '--id', 'ci', '--scopes', 'campaign:read,outcome:write')).out,
    );
    expect(made.entry).toMatchObject({ id: 'ci', scopes: ['campaign:read', 'outcome:write'] });
    expect((await run(null, 'keys', 'hash', made.key)).out.trim()).toBe(made.entry.hash);
  });

  it('the shadowctl binary runs as a process and exits with the documented code', { timeout: 240_000 }, async () => {
    // async spawn: the control API runs in this process and must keep serving meanwhile
    const exec = (key: string, ...args: string[]) =>
      new Promise<{ status: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], {
          env: { ...process.env, SHADOWPLANE_URL: url, SHADOWPLANE_API_KEY: key },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.once('exit', (status) => resolve({ status, stdout }));
      });
    const [denied, ok] = await Promise.all([
      exec(KEYS.write, 'campaign', 'list'),
      exec(KEYS.read, '--json', 'campaign', 'list'),
    ]);
    expect(denied.status).toBe(77); // a campaign:write key cannot read
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).campaigns.length).toBeGreaterThan(0);
  });
});
