import type { Api } from '@shadowplane/contracts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

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

/** Thrown inside translation and turned into `{ok:false, reason}`. */
class Untranslatable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}
const fail = (reason: string): never => {
  throw new Untranslatable(reason);
};

const isChat = (a: Api) => a === 'openai.chat' || a === 'openrouter.chat';

/** Chat fields that identify the caller or route billing; dropped from shadow calls (never sent under our key). */
const CHAT_DROP = [
  'user',
  'safety_identifier',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'stream_options',
];
/** OpenRouter-only request fields (routing/accounting), dropped when the target is not OpenRouter. */
const OPENROUTER_ONLY = ['provider', 'models', 'route', 'transforms', 'usage', 'plugins'];

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

// ---------------------------------------------------------------- chat → messages

/** Chat fields with an Anthropic counterpart, or none that changes the output (handled below). */
const CHAT_KNOWN = new Set([
  'model',
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'stream',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'n',
  'response_format',
  ...CHAT_DROP,
  ...OPENROUTER_ONLY,
]);

/**
 * Translates an OpenAI chat body to an Anthropic messages body (model and output cap are set
 * afterwards by the caller):
 * - leading `system`/`developer` messages → `system` (joined with a blank line); a system
 *   message after the first non-system one → `untranslatable:system_position`
 * - user/assistant text (string or text parts) → text content; assistant `tool_calls` →
 *   `tool_use` blocks (`arguments` must be JSON → else `untranslatable:tool_call_arguments`);
 *   consecutive `tool` messages → one user message of `tool_result` blocks
 * - `tools` (function) → `{name, description, input_schema}`; `tool_choice` auto/none/required/
 *   named → `{type:auto|none|any|tool}`; `parallel_tool_calls:false` →
 *   `disable_parallel_tool_use`
 * - `stop` → `stop_sequences`; `max_completion_tokens`/`max_tokens` → `max_tokens`;
 *   `temperature` (must be ≤ 1: Anthropic's range is 0–1), `top_p`, `stream` as they are
 * - `n` > 1, `logprobs`, `top_logprobs`, `seed`, `logit_bias`, penalties, `response_format`
 *   other than text, `audio`, `modalities`, `reasoning_effort`, `prediction` and any other
 *   field → `untranslatable:<field>`
 * @throws Untranslatable (internal) — use {@link prepareArmRequest}
 * Source: OpenAI chat API reference; Anthropic Messages API reference and "OpenAI SDK
 * compatibility" notes (https://docs.anthropic.com/en/api/openai-sdk).
 */
export function chatToMessages(b: Obj): Obj {
  for (const k of Object.keys(b))
    if (!CHAT_KNOWN.has(k) && b[k] !== undefined && b[k] !== null) fail(`untranslatable:${k}`);
  if (b['n'] !== undefined && b['n'] !== null && b['n'] !== 1) fail('untranslatable:n');
  if (isObj(b['response_format']) && b['response_format']['type'] !== 'text') fail('untranslatable:response_format');
  const out: Obj = { model: b['model'] };
  const system: string[] = [];
  const messages: Obj[] = [];
  let seenNonSystem = false;
  const msgs = Array.isArray(b['messages']) ? b['messages'] : fail('untranslatable:messages');
  for (const m of msgs) {
    if (!isObj(m)) fail('untranslatable:messages');
    const mm = m as Obj;
    const role = mm['role'];
    if (role === 'system' || role === 'developer') {
      if (seenNonSystem) fail('untranslatable:system_position');
      system.push(textOf(mm['content']));
      continue;
    }
    seenNonSystem = true;
    if (role === 'user') {
      messages.push({
        role: 'user',
        content: typeof mm['content'] === 'string' ? mm['content'] : textBlocks(mm['content']),
      });
    } else if (role === 'assistant') {
      const blocks: Obj[] = [];
      if (typeof mm['content'] === 'string' && mm['content'] !== '') blocks.push({ type: 'text', text: mm['content'] });
      else if (Array.isArray(mm['content'])) blocks.push(...textBlocks(mm['content']));
      for (const tc of Array.isArray(mm['tool_calls']) ? mm['tool_calls'] : []) {
        if (!isObj(tc) || tc['type'] !== 'function' || !isObj(tc['function'])) fail('untranslatable:tool_calls');
        const fn = (tc as Obj)['function'] as Obj;
        let input: unknown;
        try {
          input = JSON.parse(typeof fn['arguments'] === 'string' ? fn['arguments'] : '');
        } catch {
          fail('untranslatable:tool_call_arguments');
        }
        blocks.push({ type: 'tool_use', id: (tc as Obj)['id'], name: fn['name'], input });
      }
      if (mm['refusal'] !== undefined && mm['refusal'] !== null) fail('untranslatable:refusal');
      const onlyText = blocks.length === 1 && blocks[0]!['type'] === 'text' && typeof mm['content'] === 'string';
      messages.push({ role: 'assistant', content: onlyText ? mm['content'] : blocks });
    } else if (role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: mm['tool_call_id'], content: textOf(mm['content']) };
      const last = messages[messages.length - 1];
      if (
        last &&
        last['role'] === 'user' &&
        Array.isArray(last['content']) &&
        (last['content'] as Obj[]).every((x) => x['type'] === 'tool_result')
      ) {
        (last['content'] as Obj[]).push(block);
      } else messages.push({ role: 'user', content: [block] });
    } else fail(`untranslatable:role:${String(role)}`);
  }
  if (system.length > 0) out['system'] = system.join('\n\n');
  out['messages'] = messages;
  const maxTok = b['max_completion_tokens'] ?? b['max_tokens'];
  if (maxTok !== undefined && maxTok !== null) out['max_tokens'] = maxTok;
  if (typeof b['temperature'] === 'number') {
    if (b['temperature'] > 1) fail('untranslatable:temperature');
    out['temperature'] = b['temperature'];
  }
  if (typeof b['top_p'] === 'number') out['top_p'] = b['top_p'];
  if (b['stop'] !== undefined && b['stop'] !== null)
    out['stop_sequences'] = typeof b['stop'] === 'string' ? [b['stop']] : b['stop'];
  if (b['stream'] === true) out['stream'] = true;
  if (Array.isArray(b['tools'])) {
    out['tools'] = b['tools'].map((t) => {
      if (!isObj(t) || t['type'] !== 'function' || !isObj(t['function'])) return fail('untranslatable:tools');
      const f = t['function'] as Obj;
      if (f['strict'] === true) fail('untranslatable:tools.strict');
      const tool: Obj = { name: f['name'] };
      if (typeof f['description'] === 'string') tool['description'] = f['description'];
      tool['input_schema'] = isObj(f['parameters']) ? f['parameters'] : { type: 'object', properties: {} };
      return tool;
    });
  }
  const tc = b['tool_choice'];
  let choice: Obj | undefined;
  if (tc === 'auto') choice = { type: 'auto' };
  else if (tc === 'none') choice = { type: 'none' };
  else if (tc === 'required') choice = { type: 'any' };
  else if (isObj(tc) && tc['type'] === 'function' && isObj(tc['function']))
    choice = { type: 'tool', name: (tc['function'] as Obj)['name'] };
  else if (tc !== undefined && tc !== null) fail('untranslatable:tool_choice');
  if (b['parallel_tool_calls'] === false) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (choice) out['tool_choice'] = choice;
  return out;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (isObj(p) && (p['type'] === 'text' || p['type'] === 'input_text') && typeof p['text'] === 'string')
          return p['text'];
        return fail('untranslatable:content');
      })
      .join('');
  }
  if (content === null || content === undefined) return '';
  return fail('untranslatable:content');
}

function textBlocks(content: unknown): Obj[] {
  if (!Array.isArray(content)) return fail('untranslatable:content');
  return content.map((p) => {
    if (isObj(p) && p['type'] === 'text' && typeof p['text'] === 'string') return { type: 'text', text: p['text'] };
    return fail('untranslatable:content');
  });
}

// ---------------------------------------------------------------- messages → chat

const MESSAGES_KNOWN = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'temperature',
  'top_p',
  'stop_sequences',
  'stream',
  'tools',
  'tool_choice',
  'metadata',
]);

/**
 * Translates an Anthropic messages body to an OpenAI chat body (`openai.chat` or
 * `openrouter.chat`; model and output cap set afterwards):
 * - `system` (string or text blocks) → a leading `system` message
 * - text blocks → text (a single string when the original was a string, else text parts);
 *   `tool_use` → assistant `tool_calls` (`arguments` = JSON of `input`); `tool_result` → one
 *   `tool` message each, placed before the rest of that user turn; `is_error: true` →
 *   `untranslatable:tool_result.is_error`; `thinking` → `untranslatable:thinking`
 * - `tools` → `{type:'function', function:{name, description, parameters}}`; `tool_choice`
 *   auto/any/tool/none → 'auto'/'required'/named/'none'; `disable_parallel_tool_use` →
 *   `parallel_tool_calls:false`
 * - `stop_sequences` → `stop`; `max_tokens` → the chat cap; `temperature`, `top_p`, `stream`
 * - `top_k`, `thinking` and any other field → `untranslatable:<field>`; `cache_control`
 *   markers are dropped (a caching hint: it changes cost, not the output)
 * @throws Untranslatable (internal) — use {@link prepareArmRequest}
 */
export function messagesToChat(b: Obj, _target: Api): Obj {
  for (const k of Object.keys(b))
    if (!MESSAGES_KNOWN.has(k) && b[k] !== undefined && b[k] !== null) fail(`untranslatable:${k}`);
  const out: Obj = { model: b['model'] };
  const messages: Obj[] = [];
  if (b['system'] !== undefined) {
    const s = typeof b['system'] === 'string' ? b['system'] : textOf(b['system']);
    messages.push({ role: 'system', content: s });
  }
  for (const m of Array.isArray(b['messages']) ? b['messages'] : fail('untranslatable:messages')) {
    if (!isObj(m)) fail('untranslatable:messages');
    const mm = m as Obj;
    const role = mm['role'];
    if (role !== 'user' && role !== 'assistant') fail(`untranslatable:role:${String(role)}`);
    if (typeof mm['content'] === 'string') {
      messages.push({ role, content: mm['content'] });
      continue;
    }
    const blocks = Array.isArray(mm['content']) ? (mm['content'] as unknown[]) : fail('untranslatable:content');
    const texts: Obj[] = [];
    const toolCalls: Obj[] = [];
    for (const blk of blocks) {
      if (!isObj(blk)) fail('untranslatable:content');
      const bb = blk as Obj;
      const type = bb['type'];
      if (type === 'text') texts.push({ type: 'text', text: bb['text'] });
      else if (type === 'tool_use' && role === 'assistant') {
        toolCalls.push({
          id: bb['id'],
          type: 'function',
          function: { name: bb['name'], arguments: JSON.stringify(bb['input'] ?? {}) },
        });
      } else if (type === 'tool_result' && role === 'user') {
        if (bb['is_error'] === true) fail('untranslatable:tool_result.is_error');
        messages.push({
          role: 'tool',
          tool_call_id: bb['tool_use_id'],
          content: typeof bb['content'] === 'string' ? bb['content'] : textOf(bb['content'] ?? ''),
        });
      } else if (type === 'thinking' || type === 'redacted_thinking') fail('untranslatable:thinking');
      else fail(`untranslatable:content:${String(type)}`);
    }
    if (role === 'assistant') {
      const msg: Obj = { role: 'assistant', content: texts.length > 0 ? texts.map((t) => t['text']).join('') : null };
      if (toolCalls.length > 0) msg['tool_calls'] = toolCalls;
      messages.push(msg);
    } else if (texts.length > 0) messages.push({ role: 'user', content: texts });
  }
  out['messages'] = messages;
  if (b['max_tokens'] !== undefined) out['max_tokens'] = b['max_tokens'];
  if (typeof b['temperature'] === 'number') out['temperature'] = b['temperature'];
  if (typeof b['top_p'] === 'number') out['top_p'] = b['top_p'];
  if (Array.isArray(b['stop_sequences'])) out['stop'] = b['stop_sequences'];
  if (b['stream'] === true) out['stream'] = true;
  if (Array.isArray(b['tools'])) {
    out['tools'] = b['tools'].map((t) => {
      if (!isObj(t)) return fail('untranslatable:tools');
      const fn: Obj = { name: t['name'] };
      if (typeof t['description'] === 'string') fn['description'] = t['description'];
      fn['parameters'] = t['input_schema'] ?? { type: 'object', properties: {} };
      return { type: 'function', function: fn };
    });
  }
  const tc = b['tool_choice'];
  if (isObj(tc)) {
    const type = tc['type'];
    if (type === 'auto') out['tool_choice'] = 'auto';
    else if (type === 'any') out['tool_choice'] = 'required';
    else if (type === 'none') out['tool_choice'] = 'none';
    else if (type === 'tool') out['tool_choice'] = { type: 'function', function: { name: tc['name'] } };
    else fail('untranslatable:tool_choice');
    if (tc['disable_parallel_tool_use'] === true) out['parallel_tool_calls'] = false;
  } else if (tc !== undefined) fail('untranslatable:tool_choice');
  return out;
}
