import type { Api } from '@shadowplane/contracts';
import type { Plan } from './engine.js';
import { openaiDuration, type SlidingWindowLimiter } from './limits.js';

/**
 * Rate-limit headers in the provider's naming (none for OpenRouter, as recorded): Anthropic's
 * `anthropic-ratelimit-*` with RFC 3339 reset times, OpenAI's `x-ratelimit-*` with durations.
 */
export function limitHeaders(api: Api, l: SlidingWindowLimiter, nowMs: number): Record<string, string> {
  const s = l.state(nowMs);
  if (api === 'openrouter.chat') return {};
  if (api === 'anthropic.messages') {
    const at = (ms: number) => isoSeconds(Math.ceil((nowMs + ms) / 1000));
    return {
      'anthropic-ratelimit-requests-limit': String(l.rpm),
      'anthropic-ratelimit-requests-remaining': String(s.remainingRequests),
      'anthropic-ratelimit-requests-reset': at(s.resetRequestsMs),
      'anthropic-ratelimit-tokens-limit': String(l.tpm),
      'anthropic-ratelimit-tokens-remaining': String(s.remainingTokens),
      'anthropic-ratelimit-tokens-reset': at(s.resetTokensMs),
    };
  }
  return {
    'x-ratelimit-limit-requests': String(l.rpm),
    'x-ratelimit-limit-tokens': String(l.tpm),
    'x-ratelimit-remaining-requests': String(s.remainingRequests),
    'x-ratelimit-remaining-tokens': String(s.remainingTokens),
    'x-ratelimit-reset-requests': openaiDuration(s.resetRequestsMs),
    'x-ratelimit-reset-tokens': openaiDuration(s.resetTokensMs),
  };
}

/** Adds the provider's request-id headers to `h` (Anthropic `request-id`; OpenAI `x-request-id` and processing time; none for OpenRouter). */
export function addIdHeaders(h: Record<string, string>, api: Api, requestId: string, plan: Plan): void {
  if (api === 'anthropic.messages') h['request-id'] = requestId;
  else if (api !== 'openrouter.chat') {
    h['x-request-id'] = requestId;
    h['openai-processing-ms'] = String(Math.round(plan.ttftMs + plan.generationMs));
    h['openai-version'] = '2020-10-01';
  }
}

let isoCache = { s: -1, text: '' };
/** RFC 3339 UTC timestamp of epoch second `s` (cached: most headers in a second share it). */
function isoSeconds(s: number): string {
  if (isoCache.s !== s) isoCache = { s, text: new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return isoCache.text;
}
