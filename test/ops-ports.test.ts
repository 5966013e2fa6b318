import { describe, expect, it } from 'vitest';
import { DuplicatorEnv } from '@shadowplane/duplicator';
import { SidecarEnv } from '@shadowplane/sidecar';
import { VerdictEnv } from '@shadowplane/verdict';

describe('default ops addresses', () => {
  it('differ per role, so a sidecar, a duplicator and a verdict service start side by side on one host with no flags', () => {
    const ports = {
      sidecar: SidecarEnv.shape.SHADOWPLANE_SIDECAR_OPS_LISTEN.parse(undefined),
      duplicator: DuplicatorEnv.shape.SHADOWPLANE_DUPLICATOR_OPS_LISTEN.parse(undefined),
      verdict: VerdictEnv.shape.SHADOWPLANE_VERDICT_OPS_LISTEN.parse(undefined),
    };
    expect(ports).toEqual({ sidecar: '127.0.0.1:9464', duplicator: '127.0.0.1:9465', verdict: '127.0.0.1:9466' });
  });
});
