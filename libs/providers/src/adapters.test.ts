import { describe, expect, it } from 'vitest';
import { Api } from '@shadowplane/contracts';
import {
  WIRE_ADAPTERS,
  attemptUpperBoundMicroUsd,
  baseUrlProblem,
  detectApi,
  promptTokensUpperBound,
  requestHeaders,
  requestUrl,
} from './index.js';

describe('wire adapters: one base_url rule, one path and one auth scheme per API', () => {
  it('joins the version-ending base URL of each real host to the request path', () => {
    expect(requestUrl('openai.chat', 'https://api.openai.com/v1')).toBe('https://api.openai.com/v1/chat/completions');
    expect(requestUrl('openai.responses', 'https://api.openai.com/v1/')).toBe('https://api.openai.com/v1/responses');
    expect(requestUrl('anthropic.messages', 'https://api.anthropic.com/v1')).toBe(
      'https://api.anthropic.com/v1/messages',
    );
    expect(requestUrl('openrouter.chat', 'https://openrouter.ai/api/v1')).toBe(
      'https://openrouter.ai/api/v1/chat/completions',
    );
  });

  it('refuses base URLs that stop at the host, carry the request path, a query, or another scheme', () => {
    expect(baseUrlProblem('anthropic.messages', 'https://api.anthropic.com')).toMatch(/end at the API version/);
    expect(baseUrlProblem('anthropic.messages', 'https://api.anthropic.com/v1/messages')).toMatch(/request path/);
    expect(baseUrlProblem('openai.chat', 'https://api.openai.com/v1/chat/completions/')).toMatch(/request path/);
    expect(baseUrlProblem('openai.chat', 'https://api.openai.com/v1?key=1')).toMatch(/query/);
    expect(baseUrlProblem('openai.chat', 'file:///v1')).toMatch(/http\(s\)/);
    expect(baseUrlProblem('openai.chat', 'not a url')).toMatch(/absolute URL/);
    expect(() => requestUrl('openai.chat', 'https://api.openai.com')).toThrow(RangeError);
  });

  it('every adapter’s public path is what the sidecar detects as that API, and every API has an adapter', () => {
    expect(Object.keys(WIRE_ADAPTERS).sort()).toEqual([...Api.options].sort());
    for (const a of Object.values(WIRE_ADAPTERS)) expect(detectApi(a.publicPath)).toBe(a.api);
  });

  it('puts the key in the API’s own header, with the version pin Anthropic requires', () => {
    expect(requestHeaders('openai.chat', { apiKey: 'k', stream: true })).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: 'Bearer k',
    });
    expect(requestHeaders('anthropic.messages', { apiKey: 'k', stream: false })).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'k',
    });
    expect(requestHeaders('openrouter.chat', { apiKey: null, stream: false })).not.toHaveProperty('authorization');
  });

  it('bounds a call by its body bytes at the highest input-side price plus the output cap, rounded up', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'héllo' }] };
    const bytes = promptTokensUpperBound(body);
    expect(bytes).toBe(Buffer.byteLength(JSON.stringify(body), 'utf8'));
    // cache writes cost more than plain input here, so every input token is priced as one: 3.75 µ$/token
    expect(attemptUpperBoundMicroUsd(bytes, 100, { input: 3, cache_write: 3.75, cached_input: 0.3, output: 15 })).toBe(
      Math.ceil(bytes * 3.75 + 100 * 15),
    );
  });
});
