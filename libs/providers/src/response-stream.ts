// The parser core of one provider response: buffering, JSON-vs-SSE sniffing, SSE decoding, and
// the result built from what the dialect readers accumulated (see ResponseParser).
import type { Api, Usage } from '@shadowplane/contracts';
import { NULL_USAGE } from '@shadowplane/contracts';
import { classifyError, errorObjectOf, retryAfterSeconds } from './errors.js';
import { headerValue } from './headers.js';
import type { ResponseMeta } from './headers.js';
import type { ParsedResponse, StreamParser, ToolCall } from './response.js';
import { anthropicBody, anthropicEvent } from './response-anthropic.js';
import { chatBody, chatChunk } from './response-openai-chat.js';
import { responsesBody, responsesEvent, responsesOutput } from './response-openai-responses.js';
import { ResponseAccumulator, isObj, type Obj } from './response-state.js';
import { createSseDecoder } from './sse.js';
import type { SseDecoder, SseEvent } from './sse.js';
import { anthropicUsage, openaiChatUsage, openaiResponsesUsage } from './usage.js';

/** Most bytes buffered for a JSON body or an error body before the rest is dropped (then: malformed). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
/** Most bytes of a non-2xx body kept for classification. */
const MAX_ERROR_BODY_BYTES = 256 * 1024;

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

/**
 * The incremental parser behind {@link createResponseParser} (response.ts): one per response.
 */
export class ResponseParser implements StreamParser {
  private readonly is2xx: boolean;
  private mode: 'unknown' | 'json' | 'sse' | 'raw' = 'unknown';
  private chunks: Uint8Array[] = [];
  private bufferedBytes = 0;
  private overflow = false;
  private sse: SseDecoder | null = null;
  private result: ParsedResponse | null = null;

  /** what the response said so far */
  private readonly acc = new ResponseAccumulator();
  private events = 0;
  private malformed = 0;
  private internalError = false;

  constructor(
    private readonly api: Api,
    private readonly meta: ResponseMeta,
    startMs: number | undefined,
  ) {
    this.is2xx = meta.status >= 200 && meta.status < 300;
    this.acc.baseMs = startMs;
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
        this.acc.nowMs = atMs;
        if (this.acc.baseMs === undefined) this.acc.baseMs = atMs;
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

  private onSseEvent(ev: SseEvent): void {
    this.events++;
    const data = ev.data;
    if (data.trim() === '[DONE]') {
      this.acc.complete = true;
      return;
    }
    const j = this.parseObject(data);
    if (j === null) return;
    if (this.api === 'anthropic.messages') anthropicEvent(this.acc, this.meta.status, j);
    else if (this.api === 'openai.responses') responsesEvent(this.acc, this.meta.status, j);
    else chatChunk(this.acc, this.meta.status, j);
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
    this.acc.complete = true;
    const err = errorObjectOf(j);
    if (err !== null) {
      const c = classifyError(this.meta.status, this.meta.headers, text);
      this.acc.errorClass = c.errorClass;
      this.acc.errorMessage = c.message;
      if (c.upstream !== null) this.acc.upstream = c.upstream;
      if (isObj(j['usage'])) this.acc.usageRaw = j['usage']; // billed usage beside an error is kept
      return;
    }
    if (this.api === 'anthropic.messages') anthropicBody(this.acc, j);
    else if (this.api === 'openai.responses') responsesBody(this.acc, this.meta.status, j);
    else chatBody(this.acc, j);
  }

  end(atMs?: number): ParsedResponse {
    if (this.result !== null) return this.result;
    try {
      if (atMs !== undefined) this.acc.nowMs = atMs;
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
      if (this.acc.startUsage !== null || this.acc.deltaUsage !== null) {
        usagePresent = true;
        const merged: Obj = { ...(this.acc.startUsage ?? {}) };
        for (const [k, v] of Object.entries(this.acc.deltaUsage ?? {})) merged[k] = v;
        usage = anthropicUsage(merged);
        // message_start's output_tokens is a running count, not the final one: without a
        // message_delta the final output is unknown (null), never the preliminary number.
        if (this.acc.deltaUsage === null || !Object.hasOwn(this.acc.deltaUsage, 'output_tokens'))
          usage = { ...usage, output_tokens: null };
      }
    } else if (this.acc.usageRaw !== null) {
      usagePresent = true;
      if (this.api === 'anthropic.messages') usage = anthropicUsage(this.acc.usageRaw);
      else if (this.api === 'openai.responses') usage = openaiResponsesUsage(this.acc.usageRaw);
      else usage = openaiChatUsage(this.acc.usageRaw);
    }

    const providerCostUsd = this.acc.usageRaw === null ? null : reportedCostUsd(this.acc.usageRaw);

    // Output
    let text = this.acc.text.join('');
    let refusal = this.acc.refusal.join('');
    let toolCalls: ToolCall[] = [...this.acc.toolList];
    for (const [, t] of [...this.acc.tools.entries()].sort((a, b) => a[0] - b[0])) {
      const args = t.args !== '' ? t.args : t.input !== undefined ? JSON.stringify(t.input) : '';
      toolCalls.push({ name: t.name, arguments: args });
    }
    if (this.api === 'openai.responses' && this.acc.finalResponse !== null) {
      const out = responsesOutput(this.acc.finalResponse);
      if (text === '' && out.text !== '') text = out.text;
      if (refusal === '' && out.refusal !== '') refusal = out.refusal;
      if (toolCalls.length === 0 && out.tools.length > 0) toolCalls = out.tools;
    }
    const outputText = text !== '' ? text : refusal;

    // Error class: an explicit provider error wins, then a cut stream, then malformed data.
    let errorClass = this.acc.errorClass;
    let errorMessage = this.acc.errorMessage;
    if (errorClass === null) {
      if (stream && !this.acc.complete && !this.overflow) {
        errorClass = 'stream_cut';
        errorMessage = this.events === 0 ? 'stream ended before any event' : 'stream ended before its terminal event';
      } else if (this.malformed > 0 || this.internalError || this.overflow || !this.acc.complete) {
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
      upstream: this.acc.upstream,
      model: this.acc.model,
      responseId: this.acc.responseId,
      finishReason: this.acc.finishReason,
      outputText,
      toolCalls,
      ttftMs: stream ? this.acc.ttftMs : null,
      complete: this.acc.complete,
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
