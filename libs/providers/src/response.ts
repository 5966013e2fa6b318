import type { Api, Cost, ErrorClass, RateCard, Usage } from '@shadowplane/contracts';
import { NULL_USAGE, PROVIDER_ZERO_WITH_TOKENS } from '@shadowplane/contracts';
import { classifyError, classifyErrorObject, errorObjectOf, retryAfterSeconds } from './errors.js';
import { headerValue } from './headers.js';
import type { ResponseMeta } from './headers.js';
import { createSseDecoder } from './sse.js';
import type { SseDecoder, SseEvent } from './sse.js';
import { anthropicUsage, openaiChatUsage, openaiResponsesUsage } from './usage.js';
import { providerReportedCost, rateCardCost } from './cost.js';

/** One tool call the model asked for (recorded, never executed). `arguments` is the JSON text as sent. */
export interface ToolCall {
  name: string;
  arguments: string;
}

/**
 * Everything Shadowplane records from one provider response. Token counts and costs are null when
 * the provider did not report them — never 0 in their place (docs/architecture.md honesty rule 4).
 */
export interface ParsedResponse {
  api: Api;
  /** HTTP status */
  status: number;
  /** true when the body was a server-sent event stream */
  stream: boolean;
  /** normalised usage; every field number|null; `raw` = the provider's usage block verbatim (Anthropic streams: message_start usage overlaid by message_delta usage) or null */
  usage: Usage;
  /** provider-reported cost in USD (OpenRouter `usage.cost`, plus `cost_details.upstream_inference_cost` on BYOK calls); null when absent; 0 only when reported as 0 */
  providerCostUsd: number | null;
  /** served-by echo (OpenRouter `provider`), else null */
  upstream: string | null;
  /** model echo */
  model: string | null;
  responseId: string | null;
  /** as the provider spells it: stop, length, tool_calls, end_turn, tool_use, completed, ... */
  finishReason: string | null;
  /** all text output concatenated ('' if none) */
  outputText: string;
  toolCalls: ToolCall[];
  /** ms from the stream start to the first content/token event; null unless timings were pushed, and for non-stream bodies */
  ttftMs: number | null;
  /** JSON parsed, or the stream's terminal event seen ([DONE], message_stop, response.completed|incomplete|failed) */
  complete: boolean;
  /** 2xx and no usage block at all: billed but uncounted */
  abandoned: boolean;
  /** null for a success; see ErrorClass */
  errorClass: ErrorClass | null;
  /** seconds, from retry-after-ms / retry-after; null if absent */
  retryAfterS: number | null;
  errorMessage: string | null;
}

/** Incremental response parser: feed bytes as they arrive, then call `end()` once. */
export interface StreamParser {
  /**
   * Feeds the next chunk. Never throws (hot path): a failure is recorded and surfaces as
   * `errorClass: 'malformed_response'` from `end()`. JSON and error bodies keep a reference to
   * the chunk until `end()` (no copy), so do not reuse or mutate a pushed buffer.
   * @param atMs arrival time of this chunk in ms (any monotonic clock shared with `startMs`); enables `ttftMs`
   */
  push(chunk: Uint8Array, atMs?: number): void;
  /** Finishes parsing and returns the result. Calling it again returns the same result. */
  end(atMs?: number): ParsedResponse;
}

/** Most bytes buffered for a JSON body or an error body before the rest is dropped (then: malformed). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Most bytes of a non-2xx body kept for classification. */
const MAX_ERROR_BODY_BYTES = 256 * 1024;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

const usd = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);

/**
 * The total a routing provider reported for one call, USD, or null. OpenRouter: `usage.cost` is
 * what it charged to the account; with a bring-your-own-key call (`is_byok: true`) the upstream
 * provider also billed `cost_details.upstream_inference_cost` to that key, so the call's spend is
 * the sum. On other calls `upstream_inference_cost` repeats the cost and is not added.
 * Source: https://openrouter.ai/docs/use-cases/usage-accounting ("Cost Breakdown").
 */
function reportedCostUsd(u: Obj): number | null {
  const cost = usd(u['cost']);
  if (cost === null) return null;
  if (u['is_byok'] === true && isObj(u['cost_details'])) {
    const upstream = usd(u['cost_details']['upstream_inference_cost']);
    // 15 significant digits drop the binary residue of the float sum (0.00001 + 0.0002 → 0.00021),
    // which would otherwise round up to one more micro-USD.
    if (upstream !== null) return Number((cost + upstream).toPrecision(15));
  }
  return cost;
}

class ResponseParser implements StreamParser {
  private readonly is2xx: boolean;
  private mode: 'unknown' | 'json' | 'sse' | 'raw' = 'unknown';
  private chunks: Uint8Array[] = [];
  private bufferedBytes = 0;
  private overflow = false;
  private sse: SseDecoder | null = null;
  private nowMs: number | undefined;
  private baseMs: number | undefined;
  private result: ParsedResponse | null = null;

  // accumulated state
  private text: string[] = [];
  private refusal: string[] = [];
  private tools = new Map<number, { name: string; args: string; input: unknown }>();
  private toolList: ToolCall[] = [];
  private usageRaw: Obj | null = null;
  private startUsage: Obj | null = null;
  private deltaUsage: Obj | null = null;
  private finishReason: string | null = null;
  private model: string | null = null;
  private responseId: string | null = null;
  private upstream: string | null = null;
  private complete = false;
  private errorClass: ErrorClass | null = null;
  private errorMessage: string | null = null;
  private ttftMs: number | null = null;
  private events = 0;
  private malformed = 0;
  private internalError = false;
  private finalResponse: Obj | null = null;

  constructor(
    private readonly api: Api,
    private readonly meta: ResponseMeta,
    startMs: number | undefined,
  ) {
    this.is2xx = meta.status >= 200 && meta.status < 300;
    this.baseMs = startMs;
    if (!this.is2xx) this.mode = 'raw';
    // 2xx: the first non-whitespace byte decides (a JSON error body sent as text/event-stream is
    // still JSON; a valid event stream never starts with '{'); content-type only settles an empty body.
    this.declaredSse = (headerValue(meta.headers, 'content-type') ?? '').toLowerCase().includes('text/event-stream');
  }

  private readonly declaredSse: boolean;

  private startSse(): void {
    this.mode = 'sse';
    this.sse = createSseDecoder({
      onEvent: (ev) => this.onSseEvent(ev),
      // an event over the bound: the stream cannot be read (malformed), and nothing more is buffered
      onOverflow: () => {
        this.overflow = true;
      },
    });
  }

  push(chunk: Uint8Array, atMs?: number): void {
    try {
      if (this.result !== null) return;
      if (atMs !== undefined) {
        this.nowMs = atMs;
        if (this.baseMs === undefined) this.baseMs = atMs;
      }
      if (this.mode === 'unknown') {
        this.buffer(chunk);
        this.sniff(false);
        return;
      }
      if (this.mode === 'sse') this.sse?.push(chunk);
      else this.buffer(chunk);
    } catch {
      this.internalError = true;
    }
  }

  private buffer(chunk: Uint8Array): void {
    const cap = this.mode === 'raw' ? MAX_ERROR_BODY_BYTES : MAX_BUFFERED_BYTES;
    if (this.bufferedBytes + chunk.byteLength > cap) {
      this.overflow = true;
      const room = cap - this.bufferedBytes;
      if (room > 0) {
        this.chunks.push(chunk.subarray(0, room));
        this.bufferedBytes += room;
      }
      return;
    }
    this.chunks.push(chunk);
    this.bufferedBytes += chunk.byteLength;
  }

  /** Decides JSON vs SSE from the first non-whitespace byte; on `final` with none, content-type decides. */
  private sniff(final: boolean): void {
    for (const c of this.chunks) {
      for (let i = 0; i < c.byteLength; i++) {
        const b = c[i]!;
        if (b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d || b === 0xef || b === 0xbb || b === 0xbf) continue; // ws, BOM
        if (b === 0x7b /* { */ || b === 0x5b /* [ */) {
          this.mode = 'json';
        } else {
          const held = this.chunks;
          this.chunks = [];
          this.bufferedBytes = 0;
          this.startSse();
          for (const h of held) this.sse!.push(h);
        }
        return;
      }
    }
    if (final) {
      // empty or all-whitespace body: an event stream that sent nothing is cut; a JSON body is malformed
      if (this.declaredSse) {
        this.chunks = [];
        this.bufferedBytes = 0;
        this.startSse();
      } else this.mode = 'json';
    }
  }

  private token(): void {
    if (this.ttftMs === null && this.nowMs !== undefined && this.baseMs !== undefined)
      this.ttftMs = Math.max(0, this.nowMs - this.baseMs);
  }

  private setError(
    status: number,
    err: { type: string | null; code: string | number | null; message: string | null; upstream?: string | null },
  ): void {
    if (this.errorClass !== null) return; // first error wins
    this.errorClass = classifyErrorObject(status, err);
    this.errorMessage = err.message;
    if (err.upstream) this.upstream = err.upstream;
  }

  private onSseEvent(ev: SseEvent): void {
    this.events++;
    const data = ev.data;
    if (data.trim() === '[DONE]') {
      this.complete = true;
      return;
    }
    const j = this.parseObject(data);
    if (j === null) return;
    if (this.api === 'anthropic.messages') this.anthropicEvent(ev.event, j);
    else if (this.api === 'openai.responses') this.responsesEvent(ev.event, j);
    else this.chatChunk(j);
  }

  // ---- OpenAI chat / OpenRouter ----
  private chatChunk(j: Obj): void {
    const err = errorObjectOf(j);
    if (err !== null) {
      this.setError(this.meta.status, err);
      // an error chunk (OpenRouter mid-stream or final) may carry the usage the provider billed:
      // keep it, or billed tokens vanish from the record
      this.echo(j);
      if (isObj(j['usage'])) this.usageRaw = j['usage'];
      const fr = Array.isArray(j['choices']) && isObj(j['choices'][0]) ? str(j['choices'][0]['finish_reason']) : null;
      if (fr !== null) this.finishReason = fr;
      return;
    }
    this.echo(j);
    const choices = Array.isArray(j['choices']) ? j['choices'] : [];
    for (const ch of choices) {
      if (!isObj(ch)) continue;
      if (ch['index'] !== undefined && ch['index'] !== 0) continue;
      const delta = isObj(ch['delta']) ? ch['delta'] : null;
      if (delta) {
        const content = str(delta['content']);
        if (content) {
          this.text.push(content);
          this.token();
        }
        const refusal = str(delta['refusal']);
        if (refusal) {
          this.refusal.push(refusal);
          this.token();
        }
        if (str(delta['reasoning']) || str(delta['reasoning_content'])) this.token();
        if (Array.isArray(delta['tool_calls'])) {
          for (const tc of delta['tool_calls']) {
            if (!isObj(tc)) continue;
            const idx = typeof tc['index'] === 'number' ? tc['index'] : 0;
            const fn = isObj(tc['function']) ? tc['function'] : {};
            const t = this.tools.get(idx) ?? { name: '', args: '', input: undefined };
            const name = str(fn['name']);
            if (name) t.name += name;
            const args = str(fn['arguments']);
            if (args) t.args += args;
            this.tools.set(idx, t);
            this.token();
          }
        }
      }
      const fr = str(ch['finish_reason']);
      if (fr !== null) this.finishReason = fr;
    }
    if (isObj(j['usage'])) this.usageRaw = j['usage'];
  }

  private echo(j: Obj): void {
    const id = str(j['id']);
    if (id) this.responseId = id;
    const model = str(j['model']);
    if (model) this.model = model;
    const provider = str(j['provider']);
    if (provider) this.upstream = provider;
  }

  // ---- OpenAI Responses ----
  private responsesEvent(_event: string | undefined, j: Obj): void {
    const type = str(j['type']) ?? '';
    if (type === 'error') {
      const err = errorObjectOf(j);
      this.setError(this.meta.status, err ?? { type: null, code: null, message: null });
      return;
    }
    if (isObj(j['response'])) {
      const r = j['response'];
      const id = str(r['id']);
      if (id) this.responseId = id;
      const model = str(r['model']);
      if (model) this.model = model;
    }
    if (type.endsWith('.delta')) this.token();
    if (type === 'response.output_text.delta') {
      const d = str(j['delta']);
      if (d) this.text.push(d);
    } else if (type === 'response.refusal.delta') {
      const d = str(j['delta']);
      if (d) this.refusal.push(d);
    } else if (type === 'response.output_item.done' && isObj(j['item']) && j['item']['type'] === 'function_call') {
      const it = j['item'];
      this.toolList.push({ name: str(it['name']) ?? '', arguments: str(it['arguments']) ?? '' });
    } else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      this.complete = true;
      if (isObj(j['response'])) this.responsesFinal(j['response']);
    }
  }

  private responsesFinal(r: Obj): void {
    this.finalResponse = r;
    if (isObj(r['usage'])) this.usageRaw = r['usage'];
    const status = str(r['status']);
    const inc = isObj(r['incomplete_details']) ? str(r['incomplete_details']['reason']) : null;
    this.finishReason = status === 'incomplete' && inc ? inc : status;
    if (status === 'failed' || isObj(r['error'])) {
      const e = isObj(r['error']) ? r['error'] : {};
      this.setError(this.meta.status, { type: null, code: str(e['code']), message: str(e['message']) });
    }
  }

  /** Text, refusal and function calls from a final Responses `output` array. */
  private responsesOutput(r: Obj): { text: string; refusal: string; tools: ToolCall[] } {
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

  // ---- Anthropic Messages ----
  private anthropicEvent(_event: string | undefined, j: Obj): void {
    const type = str(j['type']) ?? '';
    switch (type) {
      case 'message_start': {
        const m = isObj(j['message']) ? j['message'] : {};
        this.echo(m);
        if (isObj(m['usage'])) this.startUsage = m['usage'];
        break;
      }
      case 'content_block_start': {
        const idx = typeof j['index'] === 'number' ? j['index'] : this.tools.size;
        const cb = isObj(j['content_block']) ? j['content_block'] : {};
        if (cb['type'] === 'tool_use' || cb['type'] === 'server_tool_use') {
          this.tools.set(idx, { name: str(cb['name']) ?? '', args: '', input: cb['input'] });
        } else if (cb['type'] === 'text') {
          const t = str(cb['text']);
          if (t) {
            this.text.push(t);
            this.token();
          }
        }
        break;
      }
      case 'content_block_delta': {
        const d = isObj(j['delta']) ? j['delta'] : {};
        const idx = typeof j['index'] === 'number' ? j['index'] : -1;
        if (d['type'] === 'text_delta') {
          const t = str(d['text']);
          if (t) this.text.push(t);
          this.token();
        } else if (d['type'] === 'input_json_delta') {
          const t = this.tools.get(idx);
          const pj = str(d['partial_json']);
          if (t && pj) t.args += pj;
          this.token();
        } else if (d['type'] === 'thinking_delta' || d['type'] === 'citations_delta') {
          this.token();
        }
        break;
      }
      case 'message_delta': {
        const d = isObj(j['delta']) ? j['delta'] : {};
        const sr = str(d['stop_reason']);
        if (sr !== null) this.finishReason = sr;
        if (isObj(j['usage'])) {
          // Cumulative counts: the latest delta wins field by field; null/absent fields keep message_start's.
          const merged: Obj = { ...(this.deltaUsage ?? {}) };
          for (const [k, v] of Object.entries(j['usage'])) if (v !== null && v !== undefined) merged[k] = v;
          this.deltaUsage = merged;
        }
        break;
      }
      case 'message_stop':
        this.complete = true;
        break;
      case 'error': {
        const err = errorObjectOf(j);
        this.setError(this.meta.status, err ?? { type: null, code: null, message: null });
        break;
      }
      default:
        break; // ping and future event types
    }
  }

  private takeChunksText(): string {
    const all = new Uint8Array(this.bufferedBytes);
    let off = 0;
    for (const c of this.chunks) {
      all.set(c, off);
      off += c.byteLength;
    }
    this.chunks = [];
    return new TextDecoder('utf-8', { fatal: false }).decode(all);
  }

  /** Parses a JSON object (an SSE data payload or a whole body); counts anything else as malformed. */
  private parseObject(text: string): Record<string, unknown> | null {
    let j: unknown;
    try {
      j = JSON.parse(text);
    } catch {
      this.malformed++;
      return null;
    }
    if (!isObj(j)) {
      this.malformed++;
      return null;
    }
    return j;
  }

  private parseJsonBody(text: string): void {
    const j = this.parseObject(text);
    if (j === null) return;
    this.complete = true;
    const err = errorObjectOf(j);
    if (err !== null) {
      const c = classifyError(this.meta.status, this.meta.headers, text);
      this.errorClass = c.errorClass;
      this.errorMessage = c.message;
      if (c.upstream !== null) this.upstream = c.upstream;
      if (isObj(j['usage'])) this.usageRaw = j['usage']; // billed usage beside an error is kept
      return;
    }
    if (this.api === 'anthropic.messages') {
      this.echo(j);
      for (const block of Array.isArray(j['content']) ? j['content'] : []) {
        if (!isObj(block)) continue;
        if (block['type'] === 'text') this.text.push(str(block['text']) ?? '');
        else if (block['type'] === 'tool_use')
          this.toolList.push({ name: str(block['name']) ?? '', arguments: JSON.stringify(block['input'] ?? {}) });
      }
      this.finishReason = str(j['stop_reason']);
      if (isObj(j['usage'])) this.usageRaw = j['usage'];
    } else if (this.api === 'openai.responses') {
      const id = str(j['id']);
      if (id) this.responseId = id;
      const model = str(j['model']);
      if (model) this.model = model;
      this.responsesFinal(j);
    } else {
      this.echo(j);
      const choices = Array.isArray(j['choices']) ? j['choices'] : [];
      const ch = choices.find((c) => isObj(c) && (c['index'] === undefined || c['index'] === 0));
      if (isObj(ch)) {
        const msg = isObj(ch['message']) ? ch['message'] : {};
        const content = msg['content'];
        if (typeof content === 'string') this.text.push(content);
        else if (Array.isArray(content))
          for (const p of content) if (isObj(p) && typeof p['text'] === 'string') this.text.push(p['text']);
        const refusal = str(msg['refusal']);
        if (refusal) this.refusal.push(refusal);
        for (const tc of Array.isArray(msg['tool_calls']) ? msg['tool_calls'] : []) {
          if (!isObj(tc)) continue;
          const fn = isObj(tc['function']) ? tc['function'] : {};
          this.toolList.push({ name: str(fn['name']) ?? '', arguments: str(fn['arguments']) ?? '' });
        }
        this.finishReason = str(ch['finish_reason']);
      }
      if (isObj(j['usage'])) this.usageRaw = j['usage'];
    }
  }

  end(atMs?: number): ParsedResponse {
    if (this.result !== null) return this.result;
    try {
      if (atMs !== undefined) this.nowMs = atMs;
      if (this.mode === 'unknown') this.sniff(true);
      if (this.mode === 'sse') this.sse?.end();
      else if (this.mode === 'json') this.parseJsonBody(this.takeChunksText());
    } catch {
      this.internalError = true;
    }
    this.result = this.build();
    return this.result;
  }

  private build(): ParsedResponse {
    const status = this.meta.status;
    const stream = this.mode === 'sse';
    let retryAfterS: number | null = null;
    try {
      retryAfterS = retryAfterSeconds(this.meta.headers);
    } catch {
      retryAfterS = null;
    }

    if (this.mode === 'raw') {
      const text = this.takeChunksText();
      const c = classifyError(status, this.meta.headers, text);
      // a non-2xx JSON body may carry the usage the provider billed (OpenRouter reports usage for
      // calls that failed after generation began): it is kept and costed by the normal rules
      const billed = this.errorBodyUsage(text);
      return {
        ...this.emptyResult(status, false),
        ...billed,
        stream: /^\s*(data|event|:)/.test(text),
        complete: true,
        upstream: c.upstream,
        errorClass: c.errorClass,
        retryAfterS: c.retryAfterS,
        errorMessage: c.message,
      };
    }

    // Usage
    let usage: Usage = { ...NULL_USAGE };
    let usagePresent = false;
    if (this.api === 'anthropic.messages' && stream) {
      if (this.startUsage !== null || this.deltaUsage !== null) {
        usagePresent = true;
        const merged: Obj = { ...(this.startUsage ?? {}) };
        for (const [k, v] of Object.entries(this.deltaUsage ?? {})) merged[k] = v;
        usage = anthropicUsage(merged);
        // message_start's output_tokens is a running count, not the final one: without a
        // message_delta the final output is unknown (null), never the preliminary number.
        if (this.deltaUsage === null || !Object.hasOwn(this.deltaUsage, 'output_tokens'))
          usage = { ...usage, output_tokens: null };
      }
    } else if (this.usageRaw !== null) {
      usagePresent = true;
      if (this.api === 'anthropic.messages') usage = anthropicUsage(this.usageRaw);
      else if (this.api === 'openai.responses') usage = openaiResponsesUsage(this.usageRaw);
      else usage = openaiChatUsage(this.usageRaw);
    }

    const providerCostUsd = this.usageRaw === null ? null : reportedCostUsd(this.usageRaw);

    // Output
    let text = this.text.join('');
    let refusal = this.refusal.join('');
    let toolCalls: ToolCall[] = [...this.toolList];
    for (const [, t] of [...this.tools.entries()].sort((a, b) => a[0] - b[0])) {
      const args = t.args !== '' ? t.args : t.input !== undefined ? JSON.stringify(t.input) : '';
      toolCalls.push({ name: t.name, arguments: args });
    }
    if (this.api === 'openai.responses' && this.finalResponse !== null) {
      const out = this.responsesOutput(this.finalResponse);
      if (text === '' && out.text !== '') text = out.text;
      if (refusal === '' && out.refusal !== '') refusal = out.refusal;
      if (toolCalls.length === 0 && out.tools.length > 0) toolCalls = out.tools;
    }
    const outputText = text !== '' ? text : refusal;

    // Error class: an explicit provider error wins, then a cut stream, then malformed data.
    let errorClass = this.errorClass;
    let errorMessage = this.errorMessage;
    if (errorClass === null) {
      if (stream && !this.complete && !this.overflow) {
        errorClass = 'stream_cut';
        errorMessage = this.events === 0 ? 'stream ended before any event' : 'stream ended before its terminal event';
      } else if (this.malformed > 0 || this.internalError || this.overflow || !this.complete) {
        errorClass = 'malformed_response';
        errorMessage = this.overflow
          ? 'body larger than the parser buffer'
          : stream
            ? `${this.malformed} stream event(s) were not valid JSON`
            : 'body is not a JSON object';
      }
    }

    return {
      api: this.api,
      status,
      stream,
      usage,
      providerCostUsd,
      upstream: this.upstream,
      model: this.model,
      responseId: this.responseId,
      finishReason: this.finishReason,
      outputText,
      toolCalls,
      ttftMs: stream ? this.ttftMs : null,
      complete: this.complete,
      abandoned: !usagePresent,
      errorClass,
      retryAfterS,
      errorMessage,
    };
  }

  /** Usage and provider cost of a non-2xx JSON body with a top-level `usage` object; `{}` otherwise. */
  private errorBodyUsage(text: string): Pick<ParsedResponse, 'usage' | 'providerCostUsd'> | Record<string, never> {
    let j: unknown;
    try {
      j = JSON.parse(text);
    } catch {
      return {};
    }
    if (!isObj(j) || !isObj(j['usage'])) return {};
    const u = j['usage'];
    const usage =
      this.api === 'anthropic.messages'
        ? anthropicUsage(u)
        : this.api === 'openai.responses'
          ? openaiResponsesUsage(u)
          : openaiChatUsage(u);
    return { usage, providerCostUsd: reportedCostUsd(u) };
  }

  private emptyResult(status: number, abandoned: boolean): ParsedResponse {
    return {
      api: this.api,
      status,
      stream: false,
      usage: { ...NULL_USAGE },
      providerCostUsd: null,
      upstream: null,
      model: null,
      responseId: null,
      finishReason: null,
      outputText: '',
      toolCalls: [],
      ttftMs: null,
      complete: false,
      abandoned,
      errorClass: null,
      retryAfterS: null,
      errorMessage: null,
    };
  }
}

/**
 * Creates an incremental parser for one provider response of wire API `api`.
 * The body kind is sniffed from the first non-whitespace byte (`{`/`[` → JSON, anything else →
 * SSE); `content-type: text/event-stream` only decides for an empty body (then `stream_cut`, else
 * `malformed_response`). Non-2xx bodies are buffered (up to 256 KiB) and classified with
 * {@link classifyError}.
 * @param startMs the time the request was sent (same clock as `push`'s `atMs`); when omitted the
 *   first pushed `atMs` is the start, so `ttftMs` measures from the first byte
 * `push` never throws; `end` never throws.
 * Sources: OpenAI chat streaming (https://platform.openai.com/docs/api-reference/chat-streaming),
 * Responses streaming events (https://platform.openai.com/docs/api-reference/responses-streaming),
 * Anthropic streaming (https://docs.anthropic.com/en/docs/build-with-claude/streaming),
 * OpenRouter (https://openrouter.ai/docs/api-reference/streaming).
 */
export function createResponseParser(api: Api, meta: ResponseMeta, startMs?: number): StreamParser {
  return new ResponseParser(api, meta, startMs);
}

/**
 * Parses one whole provider response (JSON body or SSE text) — the same as pushing it in one
 * chunk to {@link createResponseParser}. `ttftMs` is null (no timings). Never throws.
 */
export function parseResponse(api: Api, meta: ResponseMeta, body: Uint8Array | string): ParsedResponse {
  const p = createResponseParser(api, meta);
  p.push(typeof body === 'string' ? new TextEncoder().encode(body) : body);
  return p.end();
}

/** Reason on a cost whose provider-reported 0 came with billed tokens (libs/contracts). */
export { PROVIDER_ZERO_WITH_TOKENS };

/**
 * The cost to record for a parsed response: `provider_reported` when the provider reported a
 * cost, else `rate_card` from `card` when given, else unknown (`{usd:null, micro_usd:null,
 * basis:null, reason}` with reason `no_usage` when neither input nor output tokens were reported
 * — abandoned or error responses — `no_rate_card` otherwise). Bases never blend.
 * A provider-reported 0 with billed tokens (input or output > 0) is not a measured zero (a gateway
 * that reports `cost: 0` for a paid call would make the arm look free and the budget never trip):
 * with a rate card that prices those tokens above 0 the cost is the rate-card cost, labelled
 * `rate_card` with reason {@link PROVIDER_ZERO_WITH_TOKENS}; without a rate card it is unknown
 * (usd null, same reason), so the budget settles the reserved upper bound. Where the rate card is
 * itself 0 for those tokens (a free model) the provider's 0 agrees with it and stays
 * `provider_reported`.
 * Source: docs/architecture.md honesty rules 4–6.
 */
export function resolveCost(parsed: ParsedResponse, card?: RateCard): Cost {
  if (parsed.providerCostUsd !== null) {
    const c = providerReportedCost(parsed.providerCostUsd);
    const billed = (parsed.usage.input_tokens ?? 0) > 0 || (parsed.usage.output_tokens ?? 0) > 0;
    if (c.usd === 0 && billed) {
      if (card === undefined) return { usd: null, micro_usd: null, basis: null, reason: PROVIDER_ZERO_WITH_TOKENS };
      const rc = rateCardCost(parsed.usage, card);
      if (rc.usd === 0) return c; // a free model: the provider's 0 agrees with the card
      return { ...rc, reason: PROVIDER_ZERO_WITH_TOKENS };
    }
    if (c.usd !== null) return c;
  }
  if (card !== undefined) return rateCardCost(parsed.usage, card);
  const noUsage = parsed.usage.input_tokens === null && parsed.usage.output_tokens === null;
  return { usd: null, micro_usd: null, basis: null, reason: noUsage ? 'no_usage' : 'no_rate_card' };
}
