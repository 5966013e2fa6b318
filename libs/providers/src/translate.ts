import type { Api } from '@shadowplane/contracts';
import { chatToMessages } from './chat-to-messages.js';
import { messagesToChat } from './messages-to-chat.js';
import { CHAT_DROP, fail, isChat, isObj, OPENROUTER_ONLY, Untranslatable, type Obj } from './translate-util.js';

/** What one arm sends: the body for the arm's API, or why the item cannot be sent to it. */
export type PreparedRequest = { ok: true; api: Api; body: Obj; stream: boolean } | { ok: false; reason: string };

/** The target of a prepared request. */
export interface ArmTarget {
  api: Api;
  model: string;
  /** cap on output tokens (the arm's `max_output_tokens`); the request's own cap is kept when smaller */
  maxOutputTokens: number;
  /** OpenRouter `provider.order` pin (fallbacks off); only for `openrouter.chat` */
  pinUpstreams?: readonly string[] | undefined;
}

/**
 * Builds the body one arm sends for an item, from the pinned envelope's request (docs/architecture.md
 * honesty rules 7 and 8). Same parameters as the original, with:
 * - `model` swapped to the arm's; output capped at min(request cap, arm `max_output_tokens`)
 *   (the cap is what bounds the budget reservation);
 * - `store` forced off (chat/responses), caller identity (`user`, `safety_identifier`,
 *   `metadata`) dropped; streamed chat calls ask for `stream_options.include_usage`;
 * - OpenRouter targets get `usage.include` (provider-reported cost) and, when the arm is pinned,
 *   `provider: {order, allow_fallbacks:false}`;
 * - stateful requests (`previous_response_id`, `conversation`, `background`, Anthropic
 *   `container`) → `stateful_request`; provider-executed tools (web search, code interpreter,
 *   file search, computer use, MCP) → `side_effect_tool:<type>`; non-text content (images,
 *   audio, files: their token cost cannot be bounded from the body) → `unboundable_content:<type>`;
 * - OpenAI chat ↔ Anthropic messages translation when the arm's API differs (see
 *   {@link chatToMessages}, {@link messagesToChat}); what cannot be translated →
 *   `untranslatable:<field>`; the Responses API is only sent to Responses arms.
 * Never throws; returns `{ok:false, reason}` instead.
 */
export function prepareArmRequest(srcApi: Api, srcBody: unknown, target: ArmTarget): PreparedRequest {
  try {
    if (!isObj(srcBody)) return { ok: false, reason: 'invalid_body' };
    checkCommon(srcApi, srcBody);
    let body: Obj;
    if (srcApi === target.api || (isChat(srcApi) && isChat(target.api))) body = { ...srcBody };
    else if (isChat(srcApi) && target.api === 'anthropic.messages') body = chatToMessages(srcBody);
    else if (srcApi === 'anthropic.messages' && isChat(target.api)) body = messagesToChat(srcBody, target.api);
    else return { ok: false, reason: `untranslatable:api:${srcApi}->${target.api}` };
    return { ok: true, api: target.api, body: finish(target, body), stream: body['stream'] === true };
  } catch (e) {
    if (e instanceof Untranslatable) return { ok: false, reason: e.reason };
    return { ok: false, reason: 'invalid_body' };
  }
}

function checkCommon(api: Api, b: Obj): void {
  if (api === 'openai.responses') {
    for (const k of ['previous_response_id', 'conversation'])
      if (b[k] !== undefined && b[k] !== null) fail('stateful_request');
    if (b['background'] === true) fail('stateful_request');
  }
  if (api === 'anthropic.messages' && b['container'] !== undefined) fail('stateful_request');
  if (isChat(api) && b['web_search_options'] !== undefined) fail('side_effect_tool:web_search');
  for (const t of Array.isArray(b['tools']) ? b['tools'] : []) {
    if (!isObj(t)) continue;
    const type = typeof t['type'] === 'string' ? t['type'] : undefined;
    if (api === 'anthropic.messages') {
      if (type !== undefined && type !== 'custom') fail(`side_effect_tool:${type}`);
    } else if (type !== undefined && type !== 'function' && type !== 'custom') fail(`side_effect_tool:${type}`);
  }
  const visit = (content: unknown) => {
    if (!Array.isArray(content)) return;
    for (const p of content) {
      if (!isObj(p)) continue;
      const type = String(p['type'] ?? '');
      if (
        [
          'text',
          'input_text',
          'output_text',
          'tool_use',
          'tool_result',
          'refusal',
          'thinking',
          'redacted_thinking',
          'function_call',
          'function_call_output',
        ].includes(type)
      ) {
        if (type === 'tool_result') visit(p['content']);
        continue;
      }
      fail(`unboundable_content:${type || 'unknown'}`);
    }
  };
  for (const m of Array.isArray(b['messages']) ? b['messages'] : []) if (isObj(m)) visit(m['content']);
  if (Array.isArray(b['input'])) for (const it of b['input']) if (isObj(it)) visit(it['content']);
  if (Array.isArray(b['system'])) visit(b['system']);
}

function finish(t: ArmTarget, b: Obj): Obj {
  const out: Obj = { ...b, model: t.model };
  const cap = (v: unknown) =>
    typeof v === 'number' && Number.isInteger(v) && v > 0 ? Math.min(v, t.maxOutputTokens) : t.maxOutputTokens;
  if (isChat(t.api)) {
    for (const k of CHAT_DROP) delete out[k];
    if (t.api !== 'openrouter.chat') for (const k of OPENROUTER_ONLY) delete out[k];
    const c = cap(out['max_completion_tokens'] ?? out['max_tokens']);
    delete out['max_tokens'];
    delete out['max_completion_tokens'];
    if (t.api === 'openrouter.chat') out['max_tokens'] = c;
    else out['max_completion_tokens'] = c;
    if (t.api === 'openai.chat') out['store'] = false;
    if (out['stream'] === true) out['stream_options'] = { include_usage: true };
    if (t.api === 'openrouter.chat') {
      out['usage'] = { include: true };
      if (t.pinUpstreams && t.pinUpstreams.length > 0)
        out['provider'] = { order: [...t.pinUpstreams], allow_fallbacks: false };
    }
  } else if (t.api === 'openai.responses') {
    for (const k of ['user', 'safety_identifier', 'metadata', 'service_tier', 'prompt_cache_key']) delete out[k];
    out['store'] = false;
    out['max_output_tokens'] = cap(out['max_output_tokens']);
  } else {
    delete out['metadata'];
    out['max_tokens'] = cap(out['max_tokens']);
  }
  return out;
}
