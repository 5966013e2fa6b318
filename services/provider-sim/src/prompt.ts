import type { Api } from '@shadowplane/contracts';
import type { PromptMessage } from './tokens.js';

/** A function tool the request offers. */
export interface SimTool {
  name: string;
  /** JSON Schema of the arguments, as sent (OpenAI `parameters` / Anthropic `input_schema`) */
  schema: unknown;
}

/** What the sim needs from any API's request body, normalised. */
export interface SimRequest {
  api: Api;
  model: string;
  messages: PromptMessage[];
  /** text of the last user message ('' when none) */
  lastUser: string;
  /** requested output cap (max_tokens / max_completion_tokens / max_output_tokens), or null */
  maxTokens: number | null;
  stream: boolean;
  /** OpenAI chat `stream_options.include_usage` (or OpenRouter `usage.include`) */
  includeUsage: boolean;
  tools: SimTool[];
  /** OpenRouter `provider.order` / `allow_fallbacks` */
  pin: { order: string[]; allowFallbacks: boolean } | null;
}

/** A request the provider would reject with 400: which parameter and why (provider wording). */
export interface SimRequestError {
  param: string | null;
  message: string;
  /** OpenAI error `code` (null when the provider sends none) */
  code: string | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Joins the text of a content value: a string, or parts/blocks with `text` (others summarised). */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (c === null || c === undefined) return '';
  if (Array.isArray(c)) {
    return c
      .map((p) => {
        if (typeof p === 'string') return p;
        if (!isObj(p)) return '';
        if (typeof p.text === 'string') return p.text;
        if (p.type === 'tool_use' || p.type === 'function_call') return JSON.stringify(p.input ?? p.arguments ?? {});
        if (p.type === 'tool_result' || p.type === 'function_call_output') return contentText(p.content ?? p.output);
        if (typeof p.type === 'string') return `[${p.type}]`;
        return '';
      })
      .join('\n');
  }
  return JSON.stringify(c);
}

function toolsOf(body: Obj, api: Api): SimTool[] {
  if (!Array.isArray(body.tools)) return [];
  const out: SimTool[] = [];
  for (const t of body.tools) {
    if (!isObj(t)) continue;
    if (api === 'anthropic.messages' && typeof t.name === 'string')
      out.push({ name: t.name, schema: t.input_schema ?? {} });
    else if (isObj(t.function) && typeof t.function.name === 'string')
      out.push({ name: t.function.name, schema: t.function.parameters ?? {} });
    else if (t.type === 'function' && typeof t.name === 'string')
      out.push({ name: t.name, schema: t.parameters ?? {} });
  }
  return out;
}

function intOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/**
 * Reads a request body of the given API into a {@link SimRequest}, or says why the provider
 * would reject it. Unknown fields are ignored, as the providers mostly do.
 */
export function parseRequest(api: Api, body: unknown): SimRequest | SimRequestError {
  if (!isObj(body)) return { param: null, message: 'The request body must be a JSON object.', code: null };
  if (typeof body.model !== 'string' || body.model === '') {
    return api === 'anthropic.messages'
      ? { param: 'model', message: 'model: Field required', code: null }
      : { param: 'model', message: 'you must provide a model parameter', code: null };
  }
  // Wrong JSON types of the fields that change the wire format are refused, as the providers do
  // (a lenient sim would let a client bug pass tests and fail against the real API).
  const typeErr = (param: string, want: string, v: unknown): SimRequestError => {
    const got =
      v === null
        ? 'null'
        : Array.isArray(v)
          ? 'an array'
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? 'an integer'
              : 'a decimal'
            : `a ${typeof v}`;
    return api === 'anthropic.messages'
      ? {
          param,
          message: `${param}: Input should be a valid ${want === 'an object' ? 'dictionary' : want.replace(/^an? /, '')}`,
          code: null,
        }
      : {
          param,
          message: `Invalid type for '${param}': expected ${want}, but got ${got} instead.`,
          code: 'invalid_type',
        };
  };
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    return typeErr('stream', 'a boolean', body.stream);
  if (body.stream_options !== undefined && body.stream_options !== null && !isObj(body.stream_options))
    return typeErr('stream_options', 'an object', body.stream_options);
  for (const k of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) {
    const v = body[k];
    if (v !== undefined && v !== null && !(typeof v === 'number' && Number.isInteger(v)))
      return typeErr(k, 'an integer', v);
  }
  const messages: PromptMessage[] = [];
  let maxTokens: number | null;
  if (api === 'openai.responses') {
    if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
      return {
        param: 'previous_response_id',
        message: `Previous response with id '${String(body.previous_response_id)}' not found.`,
        code: 'previous_response_not_found',
      };
    }
    if (typeof body.instructions === 'string') messages.push({ role: 'system', text: body.instructions });
    if (typeof body.input === 'string') messages.push({ role: 'user', text: body.input });
    else if (Array.isArray(body.input)) {
      for (const item of body.input) {
        if (!isObj(item)) continue;
        const role = typeof item.role === 'string' ? item.role : typeof item.type === 'string' ? item.type : 'user';
        messages.push({ role, text: item.content !== undefined ? contentText(item.content) : contentText([item]) });
      }
    } else
      return { param: 'input', message: "Missing required parameter: 'input'.", code: 'missing_required_parameter' };
    maxTokens = intOrNull(body.max_output_tokens);
  } else {
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return api === 'anthropic.messages'
        ? { param: 'messages', message: 'messages: Field required', code: null }
        : { param: 'messages', message: "Missing required parameter: 'messages'.", code: 'missing_required_parameter' };
    }
    if (api === 'anthropic.messages') {
      maxTokens = intOrNull(body.max_tokens);
      if (maxTokens === null) return { param: 'max_tokens', message: 'max_tokens: Field required', code: null };
      if (body.system !== undefined) messages.push({ role: 'system', text: contentText(body.system) });
    } else {
      maxTokens = intOrNull(body.max_completion_tokens) ?? intOrNull(body.max_tokens);
    }
    for (const m of body.messages) {
      if (!isObj(m) || typeof m.role !== 'string') {
        return { param: 'messages', message: 'Each message must be an object with a role.', code: 'invalid_type' };
      }
      const extra = Array.isArray(m.tool_calls) ? `\n${JSON.stringify(m.tool_calls)}` : '';
      messages.push({ role: m.role, text: contentText(m.content) + extra });
    }
  }
  if (maxTokens !== null && maxTokens < 1) {
    return {
      param: api === 'openai.responses' ? 'max_output_tokens' : 'max_tokens',
      message: `Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got ${maxTokens} instead.`,
      code: 'integer_below_min_value',
    };
  }
  const tools = toolsOf(body, api);
  if (tools.length > 0) messages.push({ role: 'tools', text: JSON.stringify(body.tools) });
  let lastUser = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'user') {
      lastUser = messages[i]!.text;
      break;
    }
  }
  const so = body.stream_options;
  const usageOpt = body.usage;
  const includeUsage = (isObj(so) && so.include_usage === true) || (isObj(usageOpt) && usageOpt.include === true);
  let pin: SimRequest['pin'] = null;
  if (api === 'openrouter.chat' && isObj(body.provider) && Array.isArray(body.provider.order)) {
    pin = {
      order: body.provider.order.filter((x): x is string => typeof x === 'string'),
      allowFallbacks: body.provider.allow_fallbacks !== false,
    };
  }
  return {
    api,
    model: body.model,
    messages,
    lastUser,
    maxTokens,
    stream: body.stream === true,
    includeUsage,
    tools,
    pin,
  };
}

/** True when `r` is a {@link SimRequestError}. */
export function isRequestError(r: SimRequest | SimRequestError): r is SimRequestError {
  return (r as SimRequestError).message !== undefined && (r as SimRequest).api === undefined;
}
