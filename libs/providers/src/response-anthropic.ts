// Anthropic Messages: stream events and whole bodies.
// Source: https://docs.anthropic.com/en/docs/build-with-claude/streaming.
import { errorObjectOf } from './errors.js';
import { isObj, str, type Obj, type ResponseAccumulator } from './response-state.js';

/** Reads one Messages stream event of a stream with HTTP `status`. */
export function anthropicEvent(acc: ResponseAccumulator, status: number, j: Obj): void {
  const type = str(j['type']) ?? '';
  switch (type) {
    case 'message_start': {
      const m = isObj(j['message']) ? j['message'] : {};
      acc.echo(m);
      if (isObj(m['usage'])) acc.startUsage = m['usage'];
      break;
    }
    case 'content_block_start': {
      const idx = typeof j['index'] === 'number' ? j['index'] : acc.tools.size;
      const cb = isObj(j['content_block']) ? j['content_block'] : {};
      if (cb['type'] === 'tool_use' || cb['type'] === 'server_tool_use') {
        acc.tools.set(idx, { name: str(cb['name']) ?? '', args: '', input: cb['input'] });
      } else if (cb['type'] === 'text') {
        const t = str(cb['text']);
        if (t) {
          acc.text.push(t);
          acc.token();
        }
      }
      break;
    }
    case 'content_block_delta': {
      const d = isObj(j['delta']) ? j['delta'] : {};
      const idx = typeof j['index'] === 'number' ? j['index'] : -1;
      if (d['type'] === 'text_delta') {
        const t = str(d['text']);
        if (t) acc.text.push(t);
        acc.token();
      } else if (d['type'] === 'input_json_delta') {
        const t = acc.tools.get(idx);
        const pj = str(d['partial_json']);
        if (t && pj) t.args += pj;
        acc.token();
      } else if (d['type'] === 'thinking_delta' || d['type'] === 'citations_delta') {
        acc.token();
      }
      break;
    }
    case 'message_delta': {
      const d = isObj(j['delta']) ? j['delta'] : {};
      const sr = str(d['stop_reason']);
      if (sr !== null) acc.finishReason = sr;
      if (isObj(j['usage'])) {
        // Cumulative counts: the latest delta wins field by field; null/absent fields keep message_start's.
        const merged: Obj = { ...(acc.deltaUsage ?? {}) };
        for (const [k, v] of Object.entries(j['usage'])) if (v !== null && v !== undefined) merged[k] = v;
        acc.deltaUsage = merged;
      }
      break;
    }
    case 'message_stop':
      acc.complete = true;
      break;
    case 'error': {
      const err = errorObjectOf(j);
      acc.setError(status, err ?? { type: null, code: null, message: null });
      break;
    }
    default:
      break; // ping and future event types
  }
}

/** Reads a whole (non-streaming) Messages body, already known not to be an error. */
export function anthropicBody(acc: ResponseAccumulator, j: Obj): void {
  acc.echo(j);
  for (const block of Array.isArray(j['content']) ? j['content'] : []) {
    if (!isObj(block)) continue;
    if (block['type'] === 'text') acc.text.push(str(block['text']) ?? '');
    else if (block['type'] === 'tool_use')
      acc.toolList.push({ name: str(block['name']) ?? '', arguments: JSON.stringify(block['input'] ?? {}) });
  }
  acc.finishReason = str(j['stop_reason']);
  if (isObj(j['usage'])) acc.usageRaw = j['usage'];
}
