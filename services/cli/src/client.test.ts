import { describe, expect, it } from 'vitest';
import { FlagView } from '@shadowplane/contracts';
import { checkView } from './client.js';
import { CliError, EXIT } from './exit-codes.js';

describe('checkView: answers read against the control API schemas', () => {
  const flag = { name: 'paid_dispatch', enabled: true, state: 'on', flag: null };

  it('returns the answer as it came, fields the schema does not name included (--json prints them)', () => {
    const v = checkView(FlagView, { ...flag, added_later: 1 }, 'GET /v1/admin/flags/paid_dispatch');
    expect(v).toEqual({ ...flag, added_later: 1 });
  });

  it('refuses an answer of another shape with exit 1, naming the request and the field', () => {
    let err: unknown;
    try {
      checkView(FlagView, { ...flag, enabled: 'yes' }, 'GET /v1/admin/flags/paid_dispatch');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).exitCode).toBe(EXIT.error);
    expect((err as CliError).message).toMatch(/GET \/v1\/admin\/flags\/paid_dispatch .* at enabled: /);
  });
});
