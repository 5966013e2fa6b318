import { describe, expect, it } from 'vitest';
import { catalogueRateCard, priceCatalogue } from './index.js';

describe('price catalogue', () => {
  it('parses, names its version, and gives every entry a source URL and a date', () => {
    const c = priceCatalogue();
    expect(c.version).toBe('2025-08-01.1');
    for (const e of c.entries) {
      expect(e.source).toMatch(/^https:\/\//);
      expect(e.as_of).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('finds a model by id or alias with prices per million tokens, and null for a model it does not list', () => {
    // values read by hand from data/catalogue.json
    expect(catalogueRateCard('claude-3-5-haiku-latest')).toEqual({
      card: { input: 0.8, output: 4, cached_input: 0.08, cache_write: 1, cache_write_1h: 1.6 },
      from: {
        catalogue: '2025-08-01.1',
        model: 'claude-3-5-haiku-20241022',
        source: 'https://docs.anthropic.com/en/docs/about-claude/pricing',
        as_of: '2025-08-01',
      },
    });
    expect(catalogueRateCard('openai/gpt-4.1-mini')?.card).toMatchObject({
      input: 0.4,
      cached_input: 0.1,
      output: 1.6,
    });
    expect(catalogueRateCard('GPT-4o')).toBeNull(); // ids are exact, as the provider spells them
    expect(catalogueRateCard('sim-large')).toBeNull();
  });
});
