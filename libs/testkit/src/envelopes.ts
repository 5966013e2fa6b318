import { randomUUID } from 'node:crypto';
import { itemHash, type Envelope } from '@shadowplane/contracts';

/**
 * A captured chat-completions envelope for one prompt, as the sidecar would publish it (egress,
 * production traffic, nothing redacted, retention consented), for tests that feed CAPTURE.
 * Body: `{ model: 'gpt-prod', messages: [{ role: 'user', content: prompt }], max_tokens: 200, ...extra }`;
 * `item_hash` is computed from it as the sidecar does.
 */
export function chatEnvelope(
  suite: string,
  callType: string,
  prompt: string,
  extra: Record<string, unknown> = {},
): Envelope {
  const body = { model: 'gpt-prod', messages: [{ role: 'user', content: prompt }], max_tokens: 200, ...extra };
  return {
    schema: 'shadow.envelope/v1',
    envelope_id: randomUUID(),
    captured_at: new Date().toISOString(),
    suite,
    call_type: callType,
    api: 'openai.chat',
    method: 'POST',
    path: '/v1/chat/completions',
    request: { body, body_ref: null, bytes: JSON.stringify(body).length, content_type: 'application/json' },
    item_hash: itemHash('openai.chat', '/v1/chat/completions', body),
    served: null,
    traffic_class: 'production',
    retention: { consent: true },
    expectations: [],
    redactions: [],
    source: { placement: 'egress', sidecar_id: 'test', sticky_key_hash: null },
  };
}
