import type { Api } from '@shadowplane/contracts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The wire API of a request, from its path (query ignored, trailing slash tolerated) and
 * optionally its Host. Matched by path suffix so mount prefixes (e.g. `/openai/v1/...`) work:
 * - `…/chat/completions` → `openrouter.chat` when the path has `/api/v1/` or the host is
 *   openrouter.ai, else `openai.chat`
 * - `…/v1/responses` → `openai.responses` (not `/v1/responses/{id}` reads)
 * - `…/v1/messages` → `anthropic.messages` (not `/v1/messages/count_tokens` or `/batches`)
 * @returns null for anything else
 */
export function detectApi(path: string, host?: string): Api | null {
  // string checks, not regexes: the sidecar runs this on every request head
  let p = path;
  const q = p.indexOf('?');
  if (q !== -1) p = p.slice(0, q);
  const f = p.indexOf('#');
  if (f !== -1) p = p.slice(0, f);
  while (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (p.endsWith('/chat/completions')) {
    const h = (host ?? '').toLowerCase().split(':')[0] ?? '';
    if (endsWithSegment(p, 'api/v1/chat/completions') || h === 'openrouter.ai' || h.endsWith('.openrouter.ai'))
      return 'openrouter.chat';
    return 'openai.chat';
  }
  if (endsWithSegment(p, 'v1/responses')) return 'openai.responses';
  if (endsWithSegment(p, 'v1/messages')) return 'anthropic.messages';
  return null;
}

/** True when `p` is `tail` or ends with `/` + `tail`. */
function endsWithSegment(p: string, tail: string): boolean {
  return p === tail || (p.endsWith(tail) && p.charCodeAt(p.length - tail.length - 1) === 0x2f);
}

/**
 * Appends the text of a message `content` to `out`: a string, or the `text` of text-like parts of
 * an array, tool results' content inline. Iterative with an explicit stack, and appending one by
 * one (never `push(...list)`), so no request — however many parts, however deeply nested — can
 * overflow the call stack.
 */
function contentText(content: unknown, out: string[]): void {
  const stack: { parts: unknown[]; i: number }[] = [];
  const enter = (c: unknown) => {
    if (typeof c === 'string') out.push(c);
    else if (Array.isArray(c)) stack.push({ parts: c, i: 0 });
  };
  enter(content);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.i >= top.parts.length) {
      stack.pop();
      continue;
    }
    const part = top.parts[top.i++];
    if (typeof part === 'string') out.push(part);
    else if (isObj(part)) {
      if (typeof part['text'] === 'string') out.push(part['text']);
      else if (part['type'] === 'tool_result') enter(part['content']);
      else if (typeof part['output'] === 'string') out.push(part['output']);
    }
  }
}

/**
 * The prompt text of a request: system/instructions first, then every message's text content in
 * order, joined with '\n'. Used for hashing, near-duplicate signatures and PII scanning.
 * - chat: `messages[].content` (string or text parts; all roles incl. system/developer/tool)
 * - responses: `instructions`, then `input` (string, or items: message content parts, and
 *   `function_call_output.output`)
 * - anthropic: `system` (string or text blocks), then `messages[].content` (text blocks, tool results)
 * @returns '' when the body has no recognisable text (never throws)
 */
export function requestPromptText(api: Api, body: unknown): string {
  if (!isObj(body)) return '';
  const parts: string[] = [];
  if (api === 'anthropic.messages') {
    contentText(body['system'], parts);
    for (const m of Array.isArray(body['messages']) ? body['messages'] : [])
      if (isObj(m)) contentText(m['content'], parts);
  } else if (api === 'openai.responses') {
    if (typeof body['instructions'] === 'string') parts.push(body['instructions']);
    const input = body['input'];
    if (typeof input === 'string') parts.push(input);
    else if (Array.isArray(input)) {
      for (const it of input) {
        if (typeof it === 'string') parts.push(it);
        else if (isObj(it)) {
          if (it['content'] !== undefined) contentText(it['content'], parts);
          else if (typeof it['output'] === 'string') parts.push(it['output']);
        }
      }
    }
  } else {
    for (const m of Array.isArray(body['messages']) ? body['messages'] : [])
      if (isObj(m)) contentText(m['content'], parts);
  }
  return parts.join('\n');
}

/** The `model` a request asks for, or null. */
export function requestModel(_api: Api, body: unknown): string | null {
  return isObj(body) && typeof body['model'] === 'string' ? body['model'] : null;
}

/**
 * The output-token cap a request sets, or null when it sets none: chat `max_completion_tokens`
 * (preferred) else `max_tokens`; responses `max_output_tokens`; anthropic `max_tokens`.
 * Only positive integers count.
 */
export function requestMaxOutputTokens(api: Api, body: unknown): number | null {
  if (!isObj(body)) return null;
  const pos = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);
  if (api === 'openai.responses') return pos(body['max_output_tokens']);
  if (api === 'anthropic.messages') return pos(body['max_tokens']);
  return pos(body['max_completion_tokens']) ?? pos(body['max_tokens']);
}

/** True when the request asks for a streamed (SSE) response (`stream: true`). */
export function isStreamingRequest(_api: Api, body: unknown): boolean {
  return isObj(body) && body['stream'] === true;
}
