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
      'providers:\n  - id: sim\n    base_url: http://127.0.0.1:4000/v1\n    api: openai.chat\n    api_key_env: SIM_KEY\n',
    );
    expect(loadProviderAllowlist(ok)).toEqual([
      { id: 'sim', base_url: 'http://127.0.0.1:4000/v1', api: 'openai.chat', api_key_env: 'SIM_KEY' },
    ]);
    const dup = join(dir, 'dup.yaml');
    writeFileSync(
      dup,
      '- {id: a, base_url: "http://x/v1", api: openai.chat}\n- {id: a, base_url: "http://y/v1", api: openai.chat}\n',
    );
    expect(() => loadProviderAllowlist(dup)).toThrow(/duplicate provider id/);
  });

  it('refuses a base_url that does not stop at the API version, naming the entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-cfg-'));
    const cases: [string, RegExp][] = [
      ['{id: a, base_url: "https://api.anthropic.com", api: anthropic.messages}', /end at the API version.*\/v1/],
      [
        '{id: a, base_url: "https://api.anthropic.com/v1/messages", api: anthropic.messages}',
        /without the request path/,
      ],
      ['{id: a, base_url: "https://api.openai.com/v1?x=1", api: openai.chat}', /query or fragment/],
      ['{id: a, base_url: "ftp://api.openai.com/v1", api: openai.chat}', /http\(s\)/],
    ];
    for (const [entry, msg] of cases) {
      const f = join(dir, 'bad.yaml');
      writeFileSync(f, `- ${entry}\n`);
      try {
        loadProviderAllowlist(f);
        expect.unreachable(entry);
      } catch (e) {
        expect((e as ConfigError).code).toBe('config_invalid');
        expect(String((e as ConfigError).message) + JSON.stringify((e as ConfigError).details ?? '')).toMatch(msg);
      }
    }
    const good = join(dir, 'good.yaml');
    writeFileSync(
      good,
      '- {id: o, base_url: "https://openrouter.ai/api/v1/", api: openrouter.chat}\n- {id: g, base_url: "https://x.example/openai/v1beta", api: openai.responses}\n',
    );
    expect(loadProviderAllowlist(good)).toHaveLength(2);
  });
});
