// OpenAI Responses: stream events, the final response object and whole bodies.
// Source: https://platform.openai.com/docs/api-reference/responses-streaming.
import { errorObjectOf } from './errors.js';
import type { ToolCall } from './response.js';
import { isObj, str, type Obj, type ResponseAccumulator } from './response-state.js';

/** Reads one Responses stream event of a stream with HTTP `status`. */
export function responsesEvent(acc: ResponseAccumulator, status: number, j: Obj): void {
  const type = str(j['type']) ?? '';
  if (type === 'error') {
    const err = errorObjectOf(j);
    acc.setError(status, err ?? { type: null, code: null, message: null });
    return;
  }
  if (isObj(j['response'])) {
    const r = j['response'];
    const id = str(r['id']);
    if (id) acc.responseId = id;
    const model = str(r['model']);
    if (model) acc.model = model;
  }
  if (type.endsWith('.delta')) acc.token();
  if (type === 'response.output_text.delta') {
    const d = str(j['delta']);
    if (d) acc.text.push(d);
  } else if (type === 'response.refusal.delta') {
    const d = str(j['delta']);
    if (d) acc.refusal.push(d);
  } else if (type === 'response.output_item.done' && isObj(j['item']) && j['item']['type'] === 'function_call') {
    const it = j['item'];
    acc.toolList.push({ name: str(it['name']) ?? '', arguments: str(it['arguments']) ?? '' });
  } else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
    acc.complete = true;
    if (isObj(j['response'])) responsesFinal(acc, status, j['response']);
  }
}

/** Reads the final `response` object (the terminal event's, or a whole body): usage, finish reason, error. */
export function responsesFinal(acc: ResponseAccumulator, httpStatus: number, r: Obj): void {
  acc.finalResponse = r;
  if (isObj(r['usage'])) acc.usageRaw = r['usage'];
  const status = str(r['status']);
  const inc = isObj(r['incomplete_details']) ? str(r['incomplete_details']['reason']) : null;
  acc.finishReason = status === 'incomplete' && inc ? inc : status;
  if (status === 'failed' || isObj(r['error'])) {
    const e = isObj(r['error']) ? r['error'] : {};
    acc.setError(httpStatus, { type: null, code: str(e['code']), message: str(e['message']) });
  }
}

/** Reads a whole (non-streaming) Responses body, already known not to be an error. */
export function responsesBody(acc: ResponseAccumulator, status: number, j: Obj): void {
  const id = str(j['id']);
  if (id) acc.responseId = id;
  const model = str(j['model']);
  if (model) acc.model = model;
  responsesFinal(acc, status, j);
}

/** Text, refusal and function calls from a final Responses `output` array. */
export function responsesOutput(r: Obj): { text: string; refusal: string; tools: ToolCall[] } {
  let text = '';
  let refusal = '';
  const tools: ToolCall[] = [];
  for (const item of Array.isArray(r['output']) ? r['output'] : []) {
    if (!isObj(item)) continue;
    if (item['type'] === 'message' && Array.isArray(item['content'])) {
      for (const part of item['content']) {
        if (!isObj(part)) continue;
        if (part['type'] === 'output_text') text += str(part['text']) ?? '';
        else if (part['type'] === 'refusal') refusal += str(part['refusal']) ?? '';
      }
    } else if (item['type'] === 'function_call') {
      tools.push({ name: str(item['name']) ?? '', arguments: str(item['arguments']) ?? '' });
    }
  }
  return { text, refusal, tools };
}
