// The state one provider response accumulates while it is parsed, shared by the dialect readers
// (response-openai-chat.ts, response-openai-responses.ts, response-anthropic.ts) and the parser core
// (response-stream.ts).
import type { ErrorClass } from '@shadowplane/contracts';
import { classifyErrorObject } from './errors.js';
import type { ToolCall } from './response.js';

/** A JSON object as parsed. */
export type Obj = Record<string, unknown>;
/** True for a plain JSON object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
/** `v` when a string, else null. */
export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** What a response has said so far: output, usage blocks, echoes, the terminal event, the first error. */
export class ResponseAccumulator {
  text: string[] = [];
  refusal: string[] = [];
  /** tool calls streamed in pieces, by index (OpenAI chat deltas, Anthropic content blocks) */
  tools = new Map<number, { name: string; args: string; input: unknown }>();
  /** tool calls that arrived whole */
  toolList: ToolCall[] = [];
  /** the usage block as sent (the last one seen) */
  usageRaw: Obj | null = null;
  /** Anthropic streams: message_start's usage */
  startUsage: Obj | null = null;
  /** Anthropic streams: the message_delta usages merged field by field */
  deltaUsage: Obj | null = null;
  finishReason: string | null = null;
  model: string | null = null;
  responseId: string | null = null;
  upstream: string | null = null;
  /** the terminal event (or a whole JSON body) was seen */
  complete = false;
  errorClass: ErrorClass | null = null;
  errorMessage: string | null = null;
  ttftMs: number | null = null;
  /** OpenAI Responses: the final `response` object */
  finalResponse: Obj | null = null;
  /** arrival time of the chunk being parsed, ms */
  nowMs: number | undefined;
  /** the start the time to first token is measured from, ms */
  baseMs: number | undefined;

  /** Marks a content/token event: the first one sets `ttftMs` (when timings are known). */
  token(): void {
    if (this.ttftMs === null && this.nowMs !== undefined && this.baseMs !== undefined)
      this.ttftMs = Math.max(0, this.nowMs - this.baseMs);
  }

  /** Records an error object the provider sent (classified with the HTTP `status`); the first one wins. */
  setError(
    status: number,
    err: { type: string | null; code: string | number | null; message: string | null; upstream?: string | null },
  ): void {
    if (this.errorClass !== null) return; // first error wins
    this.errorClass = classifyErrorObject(status, err);
    this.errorMessage = err.message;
    if (err.upstream) this.upstream = err.upstream;
  }

  /** Takes the id, model and served-by (`provider`, OpenRouter) echoes of `j`. */
  echo(j: Obj): void {
    const id = str(j['id']);
    if (id) this.responseId = id;
    const model = str(j['model']);
    if (model) this.model = model;
    const provider = str(j['provider']);
    if (provider) this.upstream = provider;
  }
}
