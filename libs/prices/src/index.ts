// @shadowplane/prices: the price catalogue shipped as data (data/catalogue.json) and its loader.
// Named exports only.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { RateCard } from '@shadowplane/contracts';

/**
 * One catalogue entry: list prices in USD per million tokens for one model id (and its aliases),
 * with the page they were read from (`source`) and the date they were listed there (`as_of`).
 * `cached_input` = cache reads, `cache_write` = cache writes (Anthropic 5-minute writes; OpenAI
 * bills writes as ordinary input), `cache_write_1h` = Anthropic 1-hour writes.
 */
export const PriceEntry = z
  .object({
    provider_family: z.enum(['openai', 'anthropic', 'openrouter']),
    model: z.string().min(1),
    aliases: z.array(z.string().min(1)),
    input: z.number().nonnegative(),
    cached_input: z.number().nonnegative(),
    cache_write: z.number().nonnegative(),
    cache_write_1h: z.number().nonnegative().optional(),
    output: z.number().nonnegative(),
    source: z.url(),
    as_of: z.iso.date(),
  })
  .strict();
export type PriceEntry = z.infer<typeof PriceEntry>;

/** The catalogue document (`shadow.price_catalogue/v1`); `version` names it in reports and pinned specs. */
export const PriceCatalogue = z
  .object({
    schema: z.literal('shadow.price_catalogue/v1'),
    version: z.string().min(1),
    currency: z.literal('USD'),
    unit: z.literal('per million tokens'),
    note: z.string(),
    entries: z.array(PriceEntry).min(1),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    c.entries.forEach((e, i) => {
      for (const name of [e.model, ...e.aliases]) {
        if (seen.has(name))
          ctx.addIssue({ code: 'custom', message: `model name ${name} appears twice`, path: ['entries', i, 'model'] });
        seen.add(name);
      }
    });
  });
export type PriceCatalogue = z.infer<typeof PriceCatalogue>;

/** Where a rate card taken from the catalogue came from; pinned beside the card in the campaign spec. */
export interface CatalogueProvenance {
  catalogue: string;
  model: string;
  source: string;
  as_of: string;
}

let cached: PriceCatalogue | null = null;

/**
 * The shipped catalogue, parsed and checked once (zod; every model name unique).
 * Errors: ZodError when data/catalogue.json does not match {@link PriceCatalogue} (a packaging bug).
 */
export function priceCatalogue(): PriceCatalogue {
  cached ??= Object.freeze(
    PriceCatalogue.parse(JSON.parse(readFileSync(new URL('../data/catalogue.json', import.meta.url), 'utf8'))),
  ) as PriceCatalogue;
  return cached;
}

/**
 * The rate card of a model by its exact id or an alias (case-sensitive, as the provider spells
 * it), with its provenance; null when the catalogue does not list the model.
 * Shape: `{ card: RateCard (USD per million tokens), from: CatalogueProvenance }`.
 */
export function catalogueRateCard(
  model: string,
  catalogue: PriceCatalogue = priceCatalogue(),
): { card: RateCard; from: CatalogueProvenance } | null {
  const e = catalogue.entries.find((x) => x.model === model || x.aliases.includes(model));
  if (!e) return null;
  const card = RateCard.parse({
    input: e.input,
    output: e.output,
    cached_input: e.cached_input,
    cache_write: e.cache_write,
    ...(e.cache_write_1h === undefined ? {} : { cache_write_1h: e.cache_write_1h }),
  });
  return { card, from: { catalogue: catalogue.version, model: e.model, source: e.source, as_of: e.as_of } };
}
