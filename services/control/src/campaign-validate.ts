/**
 * Validation of a submitted campaign spec beyond its zod schema: checks the schema cannot express
 * (duplicate call types, absurd rate-card prices; the schema refuses patterns RE2 cannot compile), the operator
 * provider allowlist, and filling in catalogue rate cards for arms submitted without one.
 */
import { CampaignSpec } from '@shadowplane/contracts';
import { catalogueRateCard } from '@shadowplane/prices';
import { invalidRequest, parseOr400, type FieldIssue } from './errors.js';

/** Largest rate-card price a launch accepts, USD per million tokens ($1 per token). */
export const MAX_PRICE_USD_PER_MTOK = 1_000_000;

/**
 * Gives every arm submitted without a `rate_card` the catalogue's card for its model (exact id or
 * alias), pinned with `rate_card_from` (catalogue version, entry, source, date). An arm whose model
 * the catalogue does not list keeps no card and is refused at launch as before.
 */
export function withCatalogueRateCards(spec: CampaignSpec): CampaignSpec {
  const fill = (a: CampaignSpec['incumbent']): CampaignSpec['incumbent'] => {
    if (a.rate_card !== undefined) return a;
    const hit = catalogueRateCard(a.model);
    return hit ? { ...a, rate_card: hit.card, rate_card_from: hit.from } : a;
  };
  return { ...spec, incumbent: fill(spec.incumbent), candidates: spec.candidates.map(fill) };
}

/**
 * Validates a submitted spec: zod (strict, every offending field named, a regex scorer's pattern or
 * a regex expectation RE2 cannot compile included: contracts `CampaignSpec`), then every arm's and
 * judge's provider id against the operator allowlist `providerIds`; returns it with catalogue
 * rate cards filled in.
 * @throws ShadowplaneError invalid_request (400) or unknown_provider (400) with details.issues
 */
export function validateCampaignSpec(input: unknown, providerIds: ReadonlySet<string>): CampaignSpec {
  const spec = parseOr400(CampaignSpec, input);
  const bad = specIssues(spec);
  if (bad.length) throw invalidRequest(bad);
  const issues: FieldIssue[] = [];
  const check = (path: string, id: string) => {
    if (!providerIds.has(id))
      issues.push({ path, message: `provider ${JSON.stringify(id)} is not on the operator allowlist` });
  };
  check('incumbent.provider', spec.incumbent.provider);
  spec.candidates.forEach((c, i) => check(`candidates.${i}.provider`, c.provider));
  spec.scorers.forEach((s, i) => {
    if (s.kind === 'llm_judge') check(`scorers.${i}.provider`, s.provider);
  });
  if (issues.length)
    throw invalidRequest(issues, 'unknown_provider', `unknown provider id: ${issues.map((i) => i.path).join(', ')}`);
  return withCatalogueRateCards(spec);
}

/**
 * Checks the schema cannot express: a call type listed twice (it would be counted, budgeted and
 * reported twice) and a price above $1 per token — a typo (a per-token price entered per
 * million, a wrong unit); at 1e300 the worst-case reservation is not even a finite number.
 */
function specIssues(spec: CampaignSpec): FieldIssue[] {
  const bad: FieldIssue[] = [];
  spec.call_types.forEach((ct, i) => {
    if (spec.call_types.indexOf(ct) !== i)
      bad.push({ path: `call_types.${i}`, message: `duplicate call type ${JSON.stringify(ct)}` });
  });
  const arms = [
    ['incumbent', spec.incumbent] as const,
    ...spec.candidates.map((c, i) => [`candidates.${i}`, c] as const),
  ];
  for (const [path, arm] of arms) {
    for (const [k, v] of Object.entries(arm.rate_card ?? {})) {
      if (typeof v === 'number' && v > MAX_PRICE_USD_PER_MTOK)
        bad.push({
          path: `${path}.rate_card.${k}`,
          message: `must be at most ${MAX_PRICE_USD_PER_MTOK} USD per million tokens`,
        });
    }
  }
  return bad;
}
