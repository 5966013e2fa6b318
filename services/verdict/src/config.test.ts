import { describe, expect, it } from 'vitest';
import { loadVerdictEnv } from './config.js';

describe('verdict config', () => {
  it('applies documented defaults', () => {
    const e = loadVerdictEnv({});
    expect([
      e.SHADOWPLANE_VERDICT_OPS_LISTEN,
      e.SHADOWPLANE_VERDICT_PROGRESS_INTERVAL_MS,
      e.SHADOWPLANE_VERDICT_TICK_MS,
    ]).toEqual(['127.0.0.1:9466', 2000, 500]);
  });
  it('names every offending key', () => {
    expect(() => loadVerdictEnv({ SHADOWPLANE_VERDICT_OPS_LISTEN: 'nope', SHADOWPLANE_VERDICT_TICK_MS: '5' })).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        issues: [
          expect.objectContaining({ key: 'SHADOWPLANE_VERDICT_OPS_LISTEN' }),
          expect.objectContaining({ key: 'SHADOWPLANE_VERDICT_TICK_MS' }),
        ],
      }),
    );
  });
});
