import { describe, expect, it } from 'vitest';
import { classifyError, retryAfterSeconds } from './index.js';

describe('classifyError', () => {
  it.each([
    [429, '', 'rate_limited'],
    [529, '', 'overloaded'],
    [400, '', 'invalid_request'],
    [404, '', 'invalid_request'],
    [422, '', 'invalid_request'],
    [401, '', 'auth_error'],
    [403, '', 'auth_error'],
    [409, '', 'upstream_4xx'],
    [500, '', 'upstream_5xx'],
    [503, '', 'upstream_5xx'],
    [500, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'overloaded'],
    [200, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', 'overloaded'],
    [200, '{"id":"x","choices":[]}', null],
  ])('status %i with body %j → %s', (status, body, cls) => {
    expect(classifyError(status, [], body).errorClass).toBe(cls);
  });
});

describe('retryAfterSeconds', () => {
  it('reads delta-seconds', () => expect(retryAfterSeconds({ 'Retry-After': '20' })).toBe(20));
  it('prefers retry-after-ms (OpenAI) and converts ms to s', () =>
    expect(
      retryAfterSeconds([
        ['retry-after', '2'],
        ['retry-after-ms', '1500'],
      ]),
    ).toBe(1.5));
  it('reads an HTTP-date relative to the response Date header', () =>
    expect(
      retryAfterSeconds({ date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:28:30 GMT' }),
    ).toBe(30));
  it('clamps a date in the past to 0', () =>
    expect(
      retryAfterSeconds({ date: 'Wed, 21 Oct 2015 07:28:00 GMT', 'retry-after': 'Wed, 21 Oct 2015 07:27:00 GMT' }),
    ).toBe(0));
  it('is null when absent or unparseable', () => {
    expect(retryAfterSeconds({})).toBeNull();
    expect(retryAfterSeconds({ 'retry-after': 'soon' })).toBeNull();
  });
  it('works with a WHATWG Headers object', () =>
    expect(retryAfterSeconds(new Headers({ 'retry-after': '7' }))).toBe(7));
  it('flows into classifyError for a 429', () =>
    expect(classifyError(429, { 'retry-after': '3' }, '').retryAfterS).toBe(3));
});
