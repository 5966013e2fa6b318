import { describe, expect, it } from 'vitest';
import { assertCasSafeServer, compareVersions } from './server-version.js';
import { natsReplicasFromEnv } from './bus.js';

describe('nats-server version gate', () => {
  it('orders versions numerically, not as strings', () => {
    expect(compareVersions('2.10.0', '2.9.10')).toBeGreaterThan(0);
    expect(compareVersions('2.9.10', '2.10.0')).toBeLessThan(0);
    expect(compareVersions('v2.15.3', '2.15.3')).toBe(0);
    expect(compareVersions('2.11.0-RC.1', '2.11.0')).toBe(0);
  });

  it('refuses 2.9.10 (the CAS race on replicated buckets) naming the version and the fix, accepts 2.10.0 and later', () => {
    let err: unknown;
    try {
      assertCasSafeServer('2.9.10');
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({
      code: 'nats_server_unsupported',
      details: { server_version: '2.9.10', min_version: '2.10.0' },
    });
    expect((err as Error).message).toMatch(/nats-server 2\.9\.10 is older than 2\.10\.0/);
    expect((err as Error).message).toMatch(/make nats-server/);
    expect(() => assertCasSafeServer('')).toThrow(/unknown version/);
    for (const ok of ['2.10.0', '2.14.10', '2.15.3']) expect(() => assertCasSafeServer(ok)).not.toThrow();
  });
});

describe('SHADOWPLANE_NATS_REPLICAS', () => {
  it('defaults to 1, takes 1-5, and refuses anything else naming the variable', () => {
    expect(natsReplicasFromEnv({})).toBe(1);
    expect(natsReplicasFromEnv({ SHADOWPLANE_NATS_REPLICAS: '3' })).toBe(3);
    for (const bad of ['0', '6', '2.5', 'three', '-1']) {
      expect(() => natsReplicasFromEnv({ SHADOWPLANE_NATS_REPLICAS: bad })).toThrow(
        expect.objectContaining({
          code: 'config_invalid',
          message: expect.stringContaining('SHADOWPLANE_NATS_REPLICAS'),
        }),
      );
    }
  });
});
