import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CommonEnv, ConfigError, loadProviderAllowlist, parseConfig } from './index.js';

describe('config', () => {
  it('names every offending key at once', () => {
    const schema = CommonEnv.extend({ SHADOWPLANE_X_MAX: z.coerce.number().int().positive() });
    try {
      parseConfig(schema, { SHADOWPLANE_LOG_LEVEL: 'loud', SHADOWPLANE_X_MAX: '-3' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as ConfigError).issues.map((i) => i.key).sort()).toEqual([
        'SHADOWPLANE_LOG_LEVEL',
        'SHADOWPLANE_X_MAX',
      ]);
      expect((e as ConfigError).code).toBe('config_invalid');
    }
  });

  it('reads an allowlist from YAML and refuses a duplicate id', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-cfg-'));
    const ok = join(dir, 'ok.yaml');
    writeFileSync(
      ok,
      'providers:\n  - id: sim\n    base_url: http://127.0.0.1:4000\n    api: openai.chat\n    api_key_env: SIM_KEY\n',
    );
    expect(loadProviderAllowlist(ok)).toEqual([
      { id: 'sim', base_url: 'http://127.0.0.1:4000', api: 'openai.chat', api_key_env: 'SIM_KEY' },
    ]);
    const dup = join(dir, 'dup.yaml');
    writeFileSync(
      dup,
      '- {id: a, base_url: "http://x", api: openai.chat}\n- {id: a, base_url: "http://y", api: openai.chat}\n',
    );
    expect(() => loadProviderAllowlist(dup)).toThrow(/duplicate provider id/);
  });
});
