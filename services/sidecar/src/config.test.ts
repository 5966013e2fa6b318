import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@shadowplane/config';
import { loadConfig, type SidecarConfig } from './config.js';

function cfg(argv: string[], env: Record<string, string> = {}): SidecarConfig {
  const r = loadConfig(argv, env);
  if (r.kind !== 'config') throw new Error('help');
  return r.config;
}

function issueKeys(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.issues.map((i) => i.key);
    throw e;
  }
  throw new Error('expected a ConfigError');
}

function yamlFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sidecar-cfg-'));
  const p = join(dir, 'sidecar.yaml');
  writeFileSync(p, text);
  return p;
}

describe('loadConfig', () => {
  it('the simplest form needs only flags; documented defaults apply', () => {
    const c = cfg([
      '--listen',
      '127.0.0.1:8080',
      '--upstream',
      'http://127.0.0.1:4000',
      '--nats',
      'nats://127.0.0.1:4222',
      '--sample',
      '0.1',
    ]);
    expect(c.listen).toEqual({ host: '127.0.0.1', port: 8080 });
    expect(c.opsListen).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(c.routes).toEqual([
      {
        path_prefix: '/',
        upstream: 'http://127.0.0.1:4000',
        strip_prefix: false,
        preserve_host: false,
        placement: 'ingress',
      },
    ]);
    expect(c.sampling.rate).toBe(0.1);
    expect(c.capture.inlineMaxBytes).toBe(512 * 1024);
    expect(c.capture.captureMaxBytes).toBe(32 * 1024 * 1024);
  });

  it('flags override env vars', () => {
    const c = cfg(['--sample', '0.5'], {
      SHADOWPLANE_SIDECAR_UPSTREAM: 'http://up:1',
      SHADOWPLANE_SIDECAR_SAMPLE: '0.2',
      SHADOWPLANE_SIDECAR_LISTEN: '0.0.0.0:9000',
    });
    expect(c.sampling.rate).toBe(0.5);
    expect(c.listen).toEqual({ host: '0.0.0.0', port: 9000 });
  });

  it('names every offending key', () => {
    expect(issueKeys(() => loadConfig(['--upstream', 'http://x:1', '--sample', '2', '--listen', 'nope'], {}))).toEqual(
      expect.arrayContaining(['SHADOWPLANE_SIDECAR_SAMPLE', 'SHADOWPLANE_SIDECAR_LISTEN']),
    );
    expect(issueKeys(() => loadConfig([], {}))).toEqual(['SHADOWPLANE_SIDECAR_UPSTREAM']);
    expect(issueKeys(() => loadConfig(['--upstream', 'ftp://x'], {}))).toEqual(['SHADOWPLANE_SIDECAR_UPSTREAM']);
    // an unknown flag is a usage error (exit 64), not bad configuration
    expect(loadConfig(['--bogus'], {})).toMatchObject({ kind: 'usage', message: "unknown option '--bogus'" });
  });

  it('sticky sampling needs a salt', () => {
    expect(
      issueKeys(() => loadConfig(['--upstream', 'http://x:1'], { SHADOWPLANE_SIDECAR_STICKY_HEADER: 'x-tenant-id' })),
    ).toEqual(['SHADOWPLANE_SIDECAR_STICKY_SALT']);
    const c = cfg(['--upstream', 'http://x:1'], {
      SHADOWPLANE_SIDECAR_STICKY_HEADER: 'X-Tenant-Id',
      SHADOWPLANE_SIDECAR_STICKY_SALT: '0123456789abcdef',
    });
    expect(c.sampling.stickyHeader).toBe('x-tenant-id');
  });

  it('reads routes and rules from YAML', () => {
    const p = yamlFile(`
routes:
  - path_prefix: /openai/
    upstream: https://api.openai.com/
    strip_prefix: true
    placement: egress
  - host: anthropic.local
    upstream: https://api.anthropic.com
sampling:
  rate: 0.05
  suite: prod
  rules:
    - name: support
      path_prefix: /openai/v1/chat/completions
      headers: { X-Tenant-Id: acme }
      models: [gpt-4o-mini]
      rate: 0.5
      call_type: support_chat
`);
    const c = cfg(['--config', p]);
    expect(c.routes).toHaveLength(2);
    expect(c.routes[0]).toMatchObject({ path_prefix: '/openai/', strip_prefix: true, placement: 'egress' });
    expect(c.routes[1]).toMatchObject({ host: 'anthropic.local', path_prefix: '/' });
    expect(c.sampling.rate).toBe(0.05);
    expect(c.sampling.suite).toBe('prod');
    expect(c.sampling.rules[0]).toMatchObject({
      headers: { 'x-tenant-id': 'acme' },
      models: ['gpt-4o-mini'],
      rate: 0.5,
    });
  });

  it('a configured regex expectation RE2 cannot compile is named with the file and path', () => {
    const p = yamlFile(
      'routes: [{upstream: "http://x:1"}]\nsampling:\n  expectations:\n    - {kind: exact, value: ok}\n    - {kind: regex, value: "(?<=a)b"}\n',
    );
    expect(issueKeys(() => loadConfig(['--config', p], {}))).toEqual([`${p}:sampling.expectations.1.value`]);
  });

  it('a bad YAML key is named with the file and path', () => {
    const p = yamlFile('routes:\n  - upstream: http://x:1\n    bogus: 1\n');
    const keys = issueKeys(() => loadConfig(['--config', p], {}));
    expect(keys).toEqual([`${p}:routes.0`]);
    expect(issueKeys(() => loadConfig(['--config', p, '--upstream', 'http://y:1'], {}))).toEqual([`${p}:routes.0`]);
  });

  it('--help returns the usage text', () => {
    const r = loadConfig(['--help'], {});
    expect(r.kind).toBe('help');
    if (r.kind === 'help') expect(r.text).toContain('--upstream <url>');
  });
});

describe('abuse limits and opt-in', () => {
  const up = ['--upstream', 'http://127.0.0.1:1'];
  it('opt-in headers are off unless the operator turns them on (env, or the file, which wins)', () => {
    expect(cfg(up).sampling.optIn).toBe(false);
    expect(cfg(up, { SHADOWPLANE_SIDECAR_OPT_IN: 'true' }).sampling.optIn).toBe(true);
    expect(
      cfg(['--config', yamlFile('routes: [{upstream: "http://127.0.0.1:1"}]\nsampling: {opt_in: false}\n')], {
        SHADOWPLANE_SIDECAR_OPT_IN: 'true',
      }).sampling.optIn,
    ).toBe(false);
  });

  it('client deadlines, decode ratio, CPU and memory budgets and extra secret names have defaults and env overrides', () => {
    const d = cfg(up);
    expect(d.client).toEqual({
      headerTimeoutMs: 60_000,
      bodyTimeoutMs: 60_000,
      requestTimeoutMs: 300_000,
      pipelineMaxUnreadBytes: 1024 * 1024,
    });
    expect([
      d.capture.maxDecodeRatio,
      d.capture.cpuBudgetMs,
      d.capture.workerMemoryMb,
      d.capture.secretFieldNames,
    ]).toEqual([100, 2000, 512, []]);
    const e = cfg(up, {
      SHADOWPLANE_SIDECAR_CLIENT_BODY_TIMEOUT_MS: '5000',
      SHADOWPLANE_SIDECAR_REDACT_FIELD_NAMES: 'passcode, tenant-key ,',
      SHADOWPLANE_SIDECAR_CAPTURE_MAX_DECODE_RATIO: '20',
    });
    expect(e.client.bodyTimeoutMs).toBe(5000);
    expect(e.capture.secretFieldNames).toEqual(['passcode', 'tenant-key']);
    expect(e.capture.maxDecodeRatio).toBe(20);
    expect(issueKeys(() => cfg(up, { SHADOWPLANE_SIDECAR_CAPTURE_WORKER_MEMORY_MB: '1' }))).toEqual([
      'SHADOWPLANE_SIDECAR_CAPTURE_WORKER_MEMORY_MB',
    ]);
  });

  it('served-output retention is off by default; on, it needs the artifact keyring and a TTL of 1–7 days, else start-up names the key', () => {
    expect(cfg(up).capture.retainServed).toBeNull();
    const key = Buffer.alloc(32, 7).toString('base64');
    const on = cfg(up, { SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true', SHADOWPLANE_ARTIFACT_KEY: key });
    expect(on.capture.retainServed?.ttlDays).toBe(7);
    expect(on.capture.retainServed?.keyring.activeKid).toBe('default');
    expect(on.capture.retainServed?.keyring.keys.get('default')?.length).toBe(32);
    expect(
      cfg(up, {
        SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true',
        SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS: '2',
        SHADOWPLANE_ARTIFACT_KEY: key,
      }).capture.retainServed?.ttlDays,
    ).toBe(2);
    // a key given while retention is off is not read
    expect(cfg(up, { SHADOWPLANE_ARTIFACT_KEY: 'not-base64-32' }).capture.retainServed).toBeNull();
    expect(issueKeys(() => cfg(up, { SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true' }))).toEqual([
      'SHADOWPLANE_ARTIFACT_KEY',
    ]);
    expect(
      issueKeys(() => cfg(up, { SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true', SHADOWPLANE_ARTIFACT_KEY: 'c2hvcnQ=' })),
    ).toEqual(['SHADOWPLANE_ARTIFACT_KEY']);
    for (const ttl of ['0', '8', '30', '1.5', 'week'])
      expect(
        issueKeys(() =>
          cfg(up, {
            SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'true',
            SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS: ttl,
            SHADOWPLANE_ARTIFACT_KEY: key,
          }),
        ),
      ).toEqual(['SHADOWPLANE_SIDECAR_RETAIN_SERVED_TTL_DAYS']);
    expect(issueKeys(() => cfg(up, { SHADOWPLANE_SIDECAR_RETAIN_SERVED: 'maybe' }))).toEqual([
      'SHADOWPLANE_SIDECAR_RETAIN_SERVED',
    ]);
  });
});
