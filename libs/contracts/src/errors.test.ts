// Ties docs/errors.md to the code: the catalogue there and ERROR_CODES / ErrorClass here must match.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ErrorClass, ShadowplaneError, isShadowplaneError } from './index.js';

const DOC = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

/** Rows of the markdown table under the `## heading`, as cell arrays (header and rule skipped). */
function tableRows(heading: string): string[][] {
  const start = DOC.indexOf(`## ${heading}`);
  expect(start, `docs/errors.md has a "## ${heading}" section`).toBeGreaterThanOrEqual(0);
  const next = DOC.indexOf('\n## ', start + 3);
  const section = DOC.slice(start, next === -1 ? undefined : next);
  return section
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2)
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    );
}
const code = (cell: string | undefined) => (cell ?? '').replace(/^`|`$/g, '');

describe('docs/errors.md', () => {
  it('lists every API error code with the status and retry flag of ERROR_CODES, and no other', () => {
    const rows = tableRows('API error codes');
    const documented = Object.fromEntries(
      rows.map((r) => [code(r[0]), { httpStatus: Number(r[1]), retryable: r[2] === 'yes' }]),
    );
    const inCode = Object.fromEntries(
      Object.entries(ERROR_CODES).map(([k, v]) => [k, { httpStatus: v.httpStatus, retryable: v.retryable }]),
    );
    expect(documented).toEqual(inCode);
    expect(rows.length).toBe(Object.keys(ERROR_CODES).length); // no duplicate rows
  });

  it('lists every provider error class, and no other', () => {
    const rows = tableRows('Provider call error classes');
    expect(rows.map((r) => code(r[0])).sort()).toEqual([...ErrorClass.options].sort());
    for (const r of rows) expect(['yes', 'no']).toContain(r[2]);
  });
});

describe('ERROR_CODES', () => {
  it('codes are lowercase snake_case with an HTTP error status and a meaning', () => {
    for (const [k, v] of Object.entries(ERROR_CODES)) {
      expect(k).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(v.httpStatus).toBeGreaterThanOrEqual(400);
      expect(v.httpStatus).toBeLessThan(600);
      expect(v.message.length).toBeGreaterThan(0);
    }
  });

  it('ShadowplaneError carries the catalogue status, retry flag and the API body shape', () => {
    const e = new ShadowplaneError('budget_exhausted', undefined, { details: { campaign_id: 'c1' } });
    expect(e.httpStatus).toBe(409);
    expect(e.retryable).toBe(false);
    expect(e.toBody()).toEqual({
      error: {
        code: 'budget_exhausted',
        message: ERROR_CODES.budget_exhausted.message,
        details: { campaign_id: 'c1' },
      },
    });
    expect(isShadowplaneError(e)).toBe(true);
    expect(isShadowplaneError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe(false);
    expect(new ShadowplaneError('not_found', 'no campaign c9').toBody()).toEqual({
      error: { code: 'not_found', message: 'no campaign c9' },
    });
  });
});
