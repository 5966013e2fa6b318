import type { Usage } from '@shadowplane/contracts';

type Obj = Record<string, unknown>;

/**
 * A non-negative integer token count, or null when absent / not a count. Above
 * Number.MAX_SAFE_INTEGER a number is not an exact count (1e20, 1e300), so it is null too.
 */
export function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null;
}

function obj(v: unknown): Obj | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;
}

/**
 * Normalises an OpenAI Chat Completions (and OpenRouter) usage block:
 * input = prompt_tokens (already includes cached_tokens); cache_read = prompt_tokens_details.cached_tokens;
 * cache_creation = prompt_tokens_details.cache_write_tokens (OpenRouter) else null (OpenAI reports none);
 * output = completion_tokens (includes reasoning); reasoning = completion_tokens_details.reasoning_tokens.
 * Source: https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage;
 * https://openrouter.ai/docs/use-cases/usage-accounting.
 */
export function openaiChatUsage(raw: Obj): Usage {
  const pd = obj(raw['prompt_tokens_details']);
  const cd = obj(raw['completion_tokens_details']);
  return {
    input_tokens: count(raw['prompt_tokens']),
    cache_read_input_tokens: pd ? count(pd['cached_tokens']) : null,
    cache_creation_input_tokens: pd ? count(pd['cache_write_tokens']) : null,
    output_tokens: count(raw['completion_tokens']),
    reasoning_output_tokens: cd ? count(cd['reasoning_tokens']) : null,
    raw,
  };
}

/**
 * Normalises an OpenAI Responses API usage block: input = input_tokens (includes cached);
 * cache_read = input_tokens_details.cached_tokens; cache_creation null (not reported);
 * output = output_tokens (includes reasoning); reasoning = output_tokens_details.reasoning_tokens.
 * Source: https://platform.openai.com/docs/api-reference/responses/object#responses/object-usage.
 */
export function openaiResponsesUsage(raw: Obj): Usage {
  const idt = obj(raw['input_tokens_details']);
  const odt = obj(raw['output_tokens_details']);
  return {
    input_tokens: count(raw['input_tokens']),
    cache_read_input_tokens: idt ? count(idt['cached_tokens']) : null,
    cache_creation_input_tokens: null,
    output_tokens: count(raw['output_tokens']),
    reasoning_output_tokens: odt ? count(odt['reasoning_tokens']) : null,
    raw,
  };
}

/**
 * Normalises an Anthropic Messages usage block. Anthropic's `input_tokens` exclude cache reads
 * and writes, so normalised input = input_tokens + cache_read_input_tokens +
 * cache_creation_input_tokens (a missing cache field adds nothing and stays null).
 * Anthropic reports no reasoning split (thinking is billed inside output_tokens) → null.
 * Source: https://docs.anthropic.com/en/api/messages (usage); prompt caching docs
 * ("total input tokens = input_tokens + cache_creation_input_tokens + cache_read_input_tokens").
 */
export function anthropicUsage(raw: Obj): Usage {
  const base = count(raw['input_tokens']);
  const cr = count(raw['cache_read_input_tokens']);
  const cw = count(raw['cache_creation_input_tokens']);
  return {
    input_tokens: base === null ? null : base + (cr ?? 0) + (cw ?? 0),
    cache_read_input_tokens: cr,
    cache_creation_input_tokens: cw,
    output_tokens: count(raw['output_tokens']),
    reasoning_output_tokens: null,
    raw,
  };
}
