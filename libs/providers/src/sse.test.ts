import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSseDecoder, type SseEvent } from './sse.js';

/** Feeds `parts` one push at a time and records, per push, how many events had been dispatched. */
function feed(parts: (string | Uint8Array)[]): { events: SseEvent[]; after: number[] } {
  const events: SseEvent[] = [];
  const d = createSseDecoder({ onEvent: (e) => events.push(e) });
  const after: number[] = [];
  for (const p of parts) {
    d.push(p);
    after.push(events.length);
  }
  d.end();
  return { events, after };
}

describe('SSE line ends', () => {
  for (const [name, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    it(`an event ended by ${name} ${name} is dispatched by the push that brings its last byte`, () => {
      const { events, after } = feed([`data: a${eol}${eol}`, `data: b${eol}`, eol]);
      expect(events).toEqual([
        { event: undefined, data: 'a' },
        { event: undefined, data: 'b' },
      ]);
      expect(after).toEqual([1, 1, 2]);
    });
  }

  it('CR CR and CRLF CR dispatch at once; the LF of a CRLF split across pushes is not a second line end', () => {
    expect(feed(['data: x\r\r']).after).toEqual([1]);
    expect(feed(['data: x\r\n\r']).after).toEqual([1]);
    const split = feed(['data: a\r', '\n', 'data: b\r', '\n\r', '\n']);
    // "data: a" CRLF "data: b" CRLF CRLF: one event with two data lines, complete at the 4th push
    expect(split.events).toEqual([{ event: undefined, data: 'a\nb' }]);
    expect(split.after).toEqual([0, 0, 0, 1, 1]);
  });

  it('bytes: a CR at the end of one chunk and UTF-8 split across chunks', () => {
    const b = Buffer.from('event: e\rdata: é\r\r', 'utf8');
    const at = b.indexOf(0xc3) + 1; // inside é
    const { events, after } = feed([b.subarray(0, at), b.subarray(at)]);
    expect(events).toEqual([{ event: 'e', data: 'é' }]);
    expect(after).toEqual([0, 1]);
  });

  it('any stream, any line ends, any split: the same events as fed whole, each dispatched by the push holding its end', () => {
    const eol = fc.constantFrom('\n', '\r\n', '\r');
    const line = fc.oneof(
      fc.stringMatching(/^[a-z é]{0,6}$/).map((v) => `data: ${v}`),
      fc.constantFrom('event: x', ': keep-alive', 'id: 1', 'retry: 5'),
    );
    const event = fc
      .tuple(fc.array(fc.tuple(line, eol), { minLength: 1, maxLength: 3 }), eol)
      .map(([ls, end]) => ls.map(([l, e]) => l + e).join('') + end);
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (evs, cuts) => {
          const whole = evs.join('');
          const bytes = Buffer.from(whole, 'utf8');
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const parts: Uint8Array[] = [];
          let prev = 0;
          for (const p of [...points, bytes.length]) {
            parts.push(bytes.subarray(prev, p));
            prev = p;
          }
          const ref = feed([whole]);
          const got = feed(parts);
          expect(got.events).toEqual(ref.events);
          // every event whose terminating bytes arrived by push i is dispatched by then: count the
          // events that end within the first k bytes by decoding that prefix alone, ended
          let upTo = 0;
          for (let i = 0; i < parts.length; i++) {
            upTo += parts[i]!.length;
            const prefixEvents = feed([bytes.subarray(0, upTo)]).after[0]!;
            expect(got.after[i]).toBe(prefixEvents);
          }
        },
      ),
      { numRuns: 400, seed: 7 },
    );
  });
});
