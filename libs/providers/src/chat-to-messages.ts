import { CHAT_DROP, fail, isObj, OPENROUTER_ONLY, textBlocks, textOf, type Obj } from './translate-util.js';

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
      // one by one: push(...blocks) throws RangeError past ~100k parts
      else if (Array.isArray(mm['content'])) for (const b of textBlocks(mm['content'])) blocks.push(b);
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
