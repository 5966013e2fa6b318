import { describe, expect, it } from 'vitest';
import { loadControlConfig } from './config.js';

const base = { SHADOWPLANE_CONTROL_API_KEYS_FILE: 'keys.yaml', SHADOWPLANE_PROVIDERS_FILE: 'providers.yaml' };

describe('control configuration', () => {
  it('applies documented defaults', () => {
    const c = loadControlConfig(base);
    expect([
      c.host,
      c.port,
      c.env.SHADOWPLANE_CONTROL_BODY_LIMIT_BYTES,
      c.env.SHADOWPLANE_CONTROL_CAPTURE_SAMPLE,
      c.env.SHADOWPLANE_CONTROL_STORAGE,
    ]).toEqual(['127.0.0.1', 8090, 1_048_576, 200, 'file']);
  });
  it('parses IPv6 and port-0 listen addresses', () => {
    expect(loadControlConfig({ ...base, SHADOWPLANE_CONTROL_LISTEN: '[::1]:0' })).toMatchObject({
      host: '::1',
      port: 0,
    });
    expect(loadControlConfig({ ...base, SHADOWPLANE_CONTROL_LISTEN: '0.0.0.0:9000' })).toMatchObject({
      host: '0.0.0.0',
      port: 9000,
    });
  });
  it('names every bad variable at once', () => {
    let msg = '';
    try {
      loadControlConfig({ SHADOWPLANE_CONTROL_LISTEN: '8090', SHADOWPLANE_CONTROL_BODY_LIMIT_BYTES: '10' });
    } catch (e) {
      msg = (e as Error).message;
    }
    for (const k of [
      'SHADOWPLANE_CONTROL_LISTEN',
      'SHADOWPLANE_CONTROL_BODY_LIMIT_BYTES',
      'SHADOWPLANE_CONTROL_API_KEYS_FILE',
      'SHADOWPLANE_PROVIDERS_FILE',
    ])
      expect(msg).toContain(k);
  });
});
