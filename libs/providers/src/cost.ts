import type { Cost, RateCard, Usage } from '@shadowplane/contracts';

/** Parses a finite non-negative number's shortest decimal form into (digits, exponent): value = digits × 10^exp. */
function decimalParts(x: number): { digits: bigint; exp: number } {
  const s = x.toString(); // shortest round-trip form, e.g. "0.000222" or "2.22e-7"
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(s);
  if (!m) throw new RangeError(`not a non-negative finite number: ${s}`);
  const int = m[1] ?? '0';
  const frac = m[2] ?? '';
  const e = Number(m[3] ?? '0');
  return { digits: BigInt(int + frac), exp: e - frac.length };
}

/**
 * Converts a USD amount to integer micro-USD, rounded up (a ledger summing it never
 * under-counts). The amount is taken as its shortest decimal form, so 0.000222 → 222 exactly
 * (no binary floating-point residue pushes it to 223).
 * @throws RangeError for negative or non-finite input
 */
export function usdToMicroUsdCeil(usd: number): number {
  if (!Number.isFinite(usd) || usd < 0) throw new RangeError(`usd must be finite and ≥ 0, got ${usd}`);
  const { digits, exp } = decimalParts(usd);
  const e = exp + 6; // micro
  if (e >= 0) return Number(digits * 10n ** BigInt(e));
  const div = 10n ** BigInt(-e);
  const q = digits / div;
  return Number(digits % div === 0n ? q : q + 1n);
}

/** A price in USD per million tokens as an exact integer of 1e-9 USD-per-million units (nano). */
function priceNano(usdPerMillion: number): bigint {
  const { digits, exp } = decimalParts(usdPerMillion);
  const e = exp + 9;
  if (e >= 0) return digits * 10n ** BigInt(e);
  // More than 9 decimals in a per-million price: round up so cost is never under-stated.
  const div = 10n ** BigInt(-e);
  return digits % div === 0n ? digits / div : digits / div + 1n;
}

/** Anthropic `usage.cache_creation.ephemeral_1h_input_tokens` from a raw usage block, else 0. */
function anthropicOneHourWrites(raw: unknown): number {
  if (raw === null || typeof raw !== 'object') return 0;
  const cc = (raw as Record<string, unknown>)['cache_creation'];
  if (cc === null || typeof cc !== 'object') return 0;
  const n = (cc as Record<string, unknown>)['ephemeral_1h_input_tokens'];
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 0;
}

/**
 * Prices reported usage with a rate card (basis `rate_card`). Every token is priced exactly once:
 *
 *   usd = (input − cache_read − cache_creation) × input
 *       + cache_read × cached_input + cache_creation × cache_write + output × output   (all ÷ 1e6)
 *
 * Units: token counts; prices USD per million tokens; result `usd` (float) and `micro_usd`
 * (integer, rounded up, computed exactly with integer arithmetic — tokens × price-per-million is
 * already micro-USD). Rules:
 * - `input_tokens` includes cache reads and writes (normalised usage); they are taken out of the
 *   plain-input share so they are not billed twice.
 * - reasoning tokens are part of `output_tokens` and are not added again.
 * - `cached_input` / `cache_write` prices fall back to the `input` price when the card has none.
 * - Anthropic 1-hour cache writes (`raw.cache_creation.ephemeral_1h_input_tokens`, a part of
 *   `cache_creation_input_tokens`) are priced at `cache_write_1h` when the card has it, else at
 *   the `cache_write` price.
 * - A null cache part means the provider did not split it out: those tokens stay inside
 *   `input_tokens` and are priced as plain input (the usage field itself stays null).
 * - When `input_tokens` or `output_tokens` is null the cost is unknown: `{usd:null,
 *   micro_usd:null, basis:null, reason:'incomplete_usage'}` (or `'no_usage'` when both are null).
 *   Null usage never becomes 0.
 * - Inconsistent usage (cache parts larger than input) → usd null, reason `inconsistent_usage`.
 * - A cost whose micro-USD is not a safe integer → usd null, reason `out_of_range`.
 * Source: docs/architecture.md "Contracts" (usage); OpenAI (prompt_tokens include cached_tokens), Anthropic
 * (input_tokens exclude cache reads/writes; https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
 */
export function rateCardCost(usage: Usage, card: RateCard): Cost {
  const { input_tokens: inp, output_tokens: out } = usage;
  if (inp === null && out === null) return { usd: null, micro_usd: null, basis: null, reason: 'no_usage' };
  if (inp === null || out === null) return { usd: null, micro_usd: null, basis: null, reason: 'incomplete_usage' };
  const cr = usage.cache_read_input_tokens ?? 0;
  const cw = usage.cache_creation_input_tokens ?? 0;
  const plain = inp - cr - cw;
  if (plain < 0) return { usd: null, micro_usd: null, basis: null, reason: 'inconsistent_usage' };
  const pIn = priceNano(card.input);
  const pWrite = priceNano(card.cache_write ?? card.input);
  // Anthropic splits cache writes by lifetime; the 1-hour share has its own price when the card has one.
  const cw1h = Math.min(cw, anthropicOneHourWrites(usage.raw));
  const total =
    BigInt(plain) * pIn +
    BigInt(cr) * priceNano(card.cached_input ?? card.input) +
    BigInt(cw - cw1h) * pWrite +
    BigInt(cw1h) * (card.cache_write_1h !== undefined ? priceNano(card.cache_write_1h) : pWrite) +
    BigInt(out) * priceNano(card.output);
  return fromNanoMicro(total, 'rate_card');
}

/**
 * A cost from a total in 1e-9 micro-USD units: micro_usd rounded up. A total whose micro-USD is
 * not a safe integer (absurd token counts or prices) cannot be summed exactly by a ledger, so the
 * cost is unknown (`usd: null`, reason `out_of_range`) — never Infinity, never a rounded guess.
 */
function fromNanoMicro(total: bigint, basis: 'rate_card' | 'estimate'): Cost {
  const unit = 1_000_000_000n;
  const micro = total % unit === 0n ? total / unit : total / unit + 1n;
  if (micro > BigInt(Number.MAX_SAFE_INTEGER))
    return { usd: null, micro_usd: null, basis: null, reason: 'out_of_range' };
  return { usd: Number(total) / 1e15, micro_usd: Number(micro), basis };
}

/**
 * A cost the provider reported itself (e.g. OpenRouter `usage.cost`, USD), basis
 * `provider_reported`. 0 stays 0 (the provider said so); negative or non-finite → null.
 */
export function providerReportedCost(usd: number): Cost {
  if (!Number.isFinite(usd) || usd < 0)
    return { usd: null, micro_usd: null, basis: null, reason: 'invalid_provider_cost' };
  const micro = usdToMicroUsdCeil(usd);
  if (!Number.isSafeInteger(micro)) return { usd: null, micro_usd: null, basis: null, reason: 'out_of_range' };
  return { usd, micro_usd: micro, basis: 'provider_reported' };
}
