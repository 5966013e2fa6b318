// The served summary of a capture: what the teed response says (status, latency, TTFT, usage with
// nulls kept, model and upstream echo, finish reason) through the provider dialect of libs/providers.
import type { Envelope } from '@shadowplane/contracts';
import { createResponseParser, type ParsedResponse } from '@shadowplane/providers';
import { decodeBounded } from './body-decode.js';
import type { CaptureInput } from './capture-protocol.js';

/** The served summary with what retention needs: the parse and, for a JSON body, its decoded bytes. */
export interface ServedRun {
  summary: NonNullable<Envelope['served']>;
  parsed: ParsedResponse;
  /** the decoded response bytes (kept for retention: a JSON body is redacted whole) */
  plain: Buffer | null;
}

/**
 * Summarises the teed response of `c` for the envelope's `served`: null when the upstream never
 * answered, the response was larger than the tee, or its content coding could not be decoded. A
 * compressed response is decoded here (within `c.maxBodyBytes` and `c.maxDecodeRatio`) for the
 * summary only, and then has no TTFT. With `c.retainServed` the decoded bytes are kept in `plain`.
 * Latencies are ms, rounded to µs.
 */
export function summarizeServed(c: CaptureInput): ServedRun | null {
  const r = c.response;
  if (r === null || r.truncated) return null;
  const enc = r.headers.find(([k]) => k.toLowerCase() === 'content-encoding')?.[1] ?? null;
  const parser = createResponseParser(c.decision.api, { status: r.status, headers: r.headers }, c.startMs);
  let plain: Buffer | null = null;
  if (enc === null || enc.trim().toLowerCase() === 'identity') {
    for (let i = 0; i < r.chunks.length; i++) parser.push(r.chunks[i]!, r.times[i]);
    if (c.retainServed) plain = r.chunks.length === 1 ? r.chunks[0]! : Buffer.concat(r.chunks);
  } else {
    // compressed response: no per-chunk timing survives decompression, so no TTFT
    const dec = decodeBounded(Buffer.concat(r.chunks), enc, c.maxBodyBytes, c.maxDecodeRatio);
    if (dec.kind !== 'ok') return null;
    plain = dec.bytes;
    parser.push(dec.bytes);
  }
  const p = parser.end(c.endMs);
  return {
    summary: {
      status: r.status,
      upstream: p.upstream,
      model: p.model,
      latency_ms: round3(Math.max(0, c.endMs - c.startMs)),
      ttft_ms: p.ttftMs === null ? null : round3(p.ttftMs),
      usage: p.usage,
      finish_reason: p.finishReason,
      abandoned: p.abandoned,
      stream: p.stream,
    },
    parsed: p,
    plain,
  };
}

function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
