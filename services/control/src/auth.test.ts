import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiKeyStore, generateApiKey, hashApiKey, loadApiKeys, parseApiKeys } from './auth.js';

describe('API keys', () => {
  it('hashes a key as sha256:<hex> of its UTF-8 bytes (FIPS 180-2 vector for "abc")', () => {
    expect(hashApiKey('abc')).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('authenticates a known bearer key to its id and scopes, and nothing else', () => {
    const store = new ApiKeyStore([
      { id: 'ci', hash: hashApiKey('sp_ci_key'), scopes: ['campaign:read', 'outcome:write'] },
      { id: 'ops', hash: hashApiKey('sp_ops_key'), scopes: ['admin'] },
    ]);
    const p = store.authenticate('Bearer sp_ci_key');
    expect(p?.id).toBe('ci');
    expect([...p!.scopes]).toEqual(['campaign:read', 'outcome:write']);
    expect(store.authenticate('bearer   sp_ops_key')?.id).toBe('ops');
    expect(store.authenticate('Bearer sp_ci_keyX')).toBeNull();
    expect(store.authenticate('Basic c3BfY2lfa2V5')).toBeNull();
    expect(store.authenticate('sp_ci_key')).toBeNull();
    expect(store.authenticate(undefined)).toBeNull();
    expect(store.authenticate('Bearer ')).toBeNull();
  });

  it('generates 256-bit keys that hash to distinct entries', () => {
    const a = generateApiKey();
    const b = generateApiKey();
    expect(a).toMatch(/^sp_[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
    expect(new ApiKeyStore([{ id: 'x', hash: hashApiKey(a), scopes: ['admin'] }]).authenticate(`Bearer ${a}`)?.id).toBe(
      'x',
    );
  });

  it('loads a YAML keys file and names the bad entry of an invalid one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-keys-'));
    const good = join(dir, 'keys.yaml');
    writeFileSync(good, `keys:\n  - id: ci\n    hash: "${hashApiKey('k')}"\n    scopes: [campaign:read]\n`);
    expect(loadApiKeys(good)).toEqual([{ id: 'ci', hash: hashApiKey('k'), scopes: ['campaign:read'] }]);
    expect(() => parseApiKeys([{ id: 'ci', hash: 'plaintext-key', scopes: ['campaign:read'] }])).toThrow(
      /SHADOWPLANE_CONTROL_API_KEYS_FILE\[0\.hash\]/,
    );
    expect(() => parseApiKeys([{ id: 'ci', hash: hashApiKey('k'), scopes: ['root'] }])).toThrow(
      /SHADOWPLANE_CONTROL_API_KEYS_FILE\[0\.scopes\.0\]/,
    );
    expect(() =>
      parseApiKeys([
        { id: 'a', hash: hashApiKey('k'), scopes: ['admin'] },
        { id: 'a', hash: hashApiKey('j'), scopes: ['admin'] },
      ]),
    ).toThrow(/duplicate key id/);
    expect(() => loadApiKeys(join(dir, 'missing.yaml'))).toThrow(/SHADOWPLANE_CONTROL_API_KEYS_FILE/);
  });
});
