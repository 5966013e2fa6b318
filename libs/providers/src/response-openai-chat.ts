// OpenAI Chat Completions (and OpenRouter, which speaks it): stream chunks and whole bodies.
// Source: https://platform.openai.com/docs/api-reference/chat-streaming,
// https://openrouter.ai/docs/api-reference/streaming.
import { errorObjectOf } from './errors.js';
import { isObj, str, type Obj, type ResponseAccumulator } from './response-state.js';

/** Reads one `chat.completion.chunk` (or an error chunk) of a stream with HTTP `status`. */
export function chatChunk(acc: ResponseAccumulator, status: number, j: Obj): void {
  const err = errorObjectOf(j);
  if (err !== null) {
    acc.setError(status, err);
    // an error chunk (OpenRouter mid-stream or final) may carry the usage the provider billed:
    // keep it, or billed tokens vanish from the record
    acc.echo(j);
    if (isObj(j['usage'])) acc.usageRaw = j['usage'];
    const fr = Array.isArray(j['choices']) && isObj(j['choices'][0]) ? str(j['choices'][0]['finish_reason']) : null;
    if (fr !== null) acc.finishReason = fr;
    return;
  }
  acc.echo(j);
  const choices = Array.isArray(j['choices']) ? j['choices'] : [];
  for (const ch of choices) {
    if (!isObj(ch)) continue;
    if (ch['index'] !== undefined && ch['index'] !== 0) continue;
    const delta = isObj(ch['delta']) ? ch['delta'] : null;
    if (delta) {
      const content = str(delta['content']);
      if (content) {
        acc.text.push(content);
        acc.token();
      }
      const refusal = str(delta['refusal']);
      if (refusal) {
        acc.refusal.push(refusal);
        acc.token();
      }
      if (str(delta['reasoning']) || str(delta['reasoning_content'])) acc.token();
      if (Array.isArray(delta['tool_calls'])) {
        for (const tc of delta['tool_calls']) {
          if (!isObj(tc)) continue;
          const idx = typeof tc['index'] === 'number' ? tc['index'] : 0;
          const fn = isObj(tc['function']) ? tc['function'] : {};
          const t = acc.tools.get(idx) ?? { name: '', args: '', input: undefined };
          const name = str(fn['name']);
          if (name) t.name += name;
          const args = str(fn['arguments']);
          if (args) t.args += args;
          acc.tools.set(idx, t);
          acc.token();
        }
      }
    }
    const fr = str(ch['finish_reason']);
    if (fr !== null) acc.finishReason = fr;
  }
  if (isObj(j['usage'])) acc.usageRaw = j['usage'];
}

/** Reads a whole (non-streaming) chat completion body, already known not to be an error. */
export function chatBody(acc: ResponseAccumulator, j: Obj): void {
  acc.echo(j);
  const choices = Array.isArray(j['choices']) ? j['choices'] : [];
  const ch = choices.find((c) => isObj(c) && (c['index'] === undefined || c['index'] === 0));
  if (isObj(ch)) {
    const msg = isObj(ch['message']) ? ch['message'] : {};
    const content = msg['content'];
    if (typeof content === 'string') acc.text.push(content);
    else if (Array.isArray(content))
      for (const p of content) if (isObj(p) && typeof p['text'] === 'string') acc.text.push(p['text']);
    const refusal = str(msg['refusal']);
    if (refusal) acc.refusal.push(refusal);
    for (const tc of Array.isArray(msg['tool_calls']) ? msg['tool_calls'] : []) {
      if (!isObj(tc)) continue;
      const fn = isObj(tc['function']) ? tc['function'] : {};
      acc.toolList.push({ name: str(fn['name']) ?? '', arguments: str(fn['arguments']) ?? '' });
    }
    acc.finishReason = str(ch['finish_reason']);
  }
  if (isObj(j['usage'])) acc.usageRaw = j['usage'];
}
