// The request shapes every sidecar benchmark sends: a ~1 KB chat-completions request (GSM8K
// question text), plain and streaming, with a bearer token the sidecar must never capture.
import type { Shape } from './harness.js';

const QUESTION =
  'Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the farmers market daily for $2 per fresh duck egg. How much in dollars does she make every day at the farmers market? ';
function chatBody(stream: boolean): string {
  // ~1 KB request body
  const msg = {
    model: 'bench-model',
    messages: [
      { role: 'system', content: 'You are a careful math tutor. Answer with the final number after ####.' },
      { role: 'user', content: QUESTION.repeat(3) },
    ],
    max_tokens: 256,
  };
  const b = JSON.stringify(stream ? { ...msg, stream: true, stream_options: { include_usage: true } } : msg);
  return b;
}
/** `json`: non-streaming 1 KB JSON; `stream`: the same with `stream: true` and usage in the stream. */
export const SHAPES: Record<'json' | 'stream', Shape> = {
  json: {
    path: '/v1/chat/completions',
    body: chatBody(false),
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-not-a-real-key' },
    stream: false,
  },
  stream: {
    path: '/v1/chat/completions',
    body: chatBody(true),
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench-not-a-real-key' },
    stream: true,
  },
};
