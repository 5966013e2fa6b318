import { createParser } from 'eventsource-parser';
import type { EventSourceMessage } from 'eventsource-parser';

/** One server-sent event: the `event:` name (undefined when none was sent) and its `data`. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

const CR_LINE_END = /\r\n?/g;

/** Default bound on one SSE event still being assembled, in UTF-16 chars (64 Mi). */
export const DEFAULT_MAX_EVENT_CHARS = 64 * 1024 * 1024;

/** Incremental SSE decoder over raw bytes. */
export interface SseDecoder {
  /** Feeds the next bytes; chunks may split anywhere, including inside a UTF-8 sequence or CRLF. */
  push(chunk: Uint8Array | string): void;
  /** Flushes: decodes any trailing bytes and dispatches a final event that lacked its blank line. */
  end(): void;
}

/**
 * Creates an SSE decoder: a streaming UTF-8 `TextDecoder` in front of `eventsource-parser` (a
 * WHATWG-spec parser: LF/CRLF/CR line ends, `:` comments and keep-alives, multi-line `data:`).
 * Line ends are turned into LF before the parser sees them (CRLF → LF, a lone CR → LF, the LF of a
 * CRLF split across pushes dropped), so every event is dispatched in the push that brings its
 * terminating bytes: given a trailing CR, the parser itself waits for the next byte to know whether
 * an LF follows, and an event ending in CR CR (or CRLF CR) was held until more bytes arrived, which
 * inflated the time to first token recorded for such streams.
 * `onEvent` is called once per dispatched event, in order; `onComment` per comment line.
 * Invalid UTF-8 becomes U+FFFD (never throws). After `end()` further pushes are ignored.
 * Source: https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */
export function createSseDecoder(
  handlers: { onEvent: (ev: SseEvent) => void; onComment?: (comment: string) => void; onOverflow?: () => void },
  opts: { maxEventChars?: number } = {},
): SseDecoder {
  // An event still being assembled (a line without its end, or data lines without the blank line)
  // is buffered by the parser; past maxEventChars the stream is abandoned (onOverflow) so a
  // broken or hostile upstream cannot grow memory without bound.
  const maxEventChars = opts.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
  let pending = 0;
  let dispatched = false;
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  const parser = createParser({
    onEvent: (m: EventSourceMessage) => {
      dispatched = true;
      handlers.onEvent({ event: m.event, data: m.data });
    },
    ...(handlers.onComment ? { onComment: handlers.onComment } : {}),
  });
  let ended = false;
  /** the last text fed ended with a CR: an LF first in the next one is that CRLF's end */
  let afterCr = false;
  const lineEnds = (raw: string): string => {
    let text = raw;
    if (afterCr && text.charCodeAt(0) === 0x0a) text = text.slice(1);
    if (raw.length > 0) afterCr = raw.charCodeAt(raw.length - 1) === 0x0d;
    return text.includes('\r') ? text.replace(CR_LINE_END, '\n') : text;
  };
  return {
    push(chunk) {
      if (ended) return;
      const raw = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      if (raw.length === 0) return;
      const text = lineEnds(raw);
      if (text.length === 0) return;
      if (pending + text.length > maxEventChars) {
        // only the part after the last blank line can still be pending: feed up to it first
        dispatched = false;
        parser.feed(text);
        if (dispatched) {
          const lastEnd = text.lastIndexOf('\n');
          pending = text.length - lastEnd - 1;
        } else pending += text.length;
        if (pending > maxEventChars) {
          ended = true;
          handlers.onOverflow?.();
        }
        return;
      }
      dispatched = false;
      parser.feed(text);
      pending = dispatched ? text.length - text.lastIndexOf('\n') - 1 : pending + text.length;
    },
    end() {
      if (ended) return;
      ended = true;
      const tail = lineEnds(decoder.decode());
      if (tail.length > 0) parser.feed(tail);
      // A final event without its trailing blank line is still an event the server sent: two
      // line ends terminate a pending line and dispatch the pending event.
      // eventsource-parser's reset({consume}) does not dispatch.
      parser.feed('\n\n');
    },
  };
}
