import { createParser } from 'eventsource-parser';
import type { EventSourceMessage } from 'eventsource-parser';

/** One server-sent event: the `event:` name (undefined when none was sent) and its `data`. */
export interface SseEvent {
  event: string | undefined;
  data: string;
}

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
  return {
    push(chunk) {
      if (ended) return;
      const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
      if (text.length === 0) return;
      if (pending + text.length > maxEventChars) {
        // only the part after the last blank line can still be pending: feed up to it first
        dispatched = false;
        parser.feed(text);
        if (dispatched) {
          const lastEnd = Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r'));
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
      pending = dispatched ? text.length - Math.max(text.lastIndexOf('\n'), text.lastIndexOf('\r')) - 1 : pending + text.length;
    },
    end() {
      if (ended) return;
      ended = true;
      const tail = decoder.decode();
      if (tail.length > 0) parser.feed(tail);
      // A final event without its trailing blank line is still an event the server sent: two
      // line ends terminate a pending line and dispatch the pending event (a pending CR pairs
      // with the first LF as one CRLF). eventsource-parser's reset({consume}) does not dispatch.
      parser.feed('\n\n');
    },
  };
}
