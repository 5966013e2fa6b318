import type { Api } from '@shadowplane/contracts';

/** Token usage of one completion, in the sim's inclusive terms (like the contracts' Usage). */
export interface SimUsage {
  /** all input tokens, cache reads and writes included */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** Everything needed to render one successful response, on any API. */
export interface Completion {
  api: Api;
  /** model name echoed in bodies */
  model: string;
  /** response id (chatcmpl-…, resp_…, msg_…, gen-…) */
  id: string;
  /** Responses API output item id (msg_…) */
  itemId: string;
  created: number;
  /** seconds from created to completion (Responses `completed_at`) */
  durationS: number;
  pieces: string[];
  text: string;
  toolCall: { id: string; name: string; arguments: string } | null;
  finish: 'stop' | 'length' | 'tool_calls';
  usage: SimUsage;
  /** whether the response reports usage at all (false in usage_mode `never`) */
  usageReported: boolean;
  /** for OpenAI-shaped chat streams: whether the final usage chunk is sent */
  streamUsage: boolean;
  /** OpenRouter usage.cost breakdown in USD (null = cost reporting off) */
  cost: { total: number; prompt: number; completion: number } | null;
  /** OpenRouter upstream provider name */
  provider: string | null;
  /** echo of the request's output cap */
  maxTokens: number | null;
  instructions: string | null;
}

/** A stream as frames (each one complete SSE event text); content deltas are frames [deltaStart, deltaEnd). */
export interface StreamFrames {
  frames: string[];
  deltaStart: number;
  deltaEnd: number;
}
