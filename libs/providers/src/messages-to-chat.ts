import type { Api } from '@shadowplane/contracts';
import { fail, isObj, textOf, type Obj } from './translate-util.js';

/** Anthropic messages fields with a chat counterpart (or none that changes the output). */
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
