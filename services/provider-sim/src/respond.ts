import type { ServerResponse } from 'node:http';
import { end, head, sleep, type RequestLife } from './call.js';
import type { FaultKind } from './config.js';
import type { Plan } from './engine.js';
import { flushWrite } from './http-util.js';
import type { WireResponse } from './provider-errors.js';
import { renderJson, renderStream } from './wire.js';

// Writing a planned response with its latency and fault: the success body after
// ttft + generation, or its stream paced frame by frame. `fault` (malformed, stall, cut;
// hang is slept before) acts at the body's midpoint; `afterMs` overrides the stall or delays
// the cut; `stallMs` is the config's default stall.

/** Writes a complete wire response (error bodies) with its content-length. */
export function writeWire(res: ServerResponse, life: RequestLife, w: WireResponse): void {
  head(res, life, w.status, { ...w.headers, 'content-length': String(Buffer.byteLength(w.body)) });
  end(res, life, w.body);
}

/** The non-streaming success body, after ttft + generation; returns early when the request ended. */
export async function writeNonStream(
  res: ServerResponse,
  plan: Plan,
  headers: Record<string, string>,
  fault: FaultKind | null,
  afterMs: number | null,
  stallMs: number,
  signal: RequestLife,
): Promise<void> {
  const text = renderJson(plan.completion);
  if (!(await sleep(plan.ttftMs + plan.generationMs, signal))) return;
  const h = headers;
  h['content-type'] = 'application/json';
  if (fault === null || fault === 'hang') {
    // a string body lets node send headers and body in one write
    h['content-length'] = String(Buffer.byteLength(text));
    head(res, signal, 200, h);
    end(res, signal, text);
    return;
  }
  const body = Buffer.from(text, 'utf8');
  if (fault === 'malformed') {
    // a 2xx whose JSON is cut short: valid framing, unparseable body
    const bad = body.subarray(0, Math.max(1, Math.floor(body.length * 0.6)));
    head(res, signal, 200, { ...h, 'content-length': bad.length });
    end(res, signal, bad);
    return;
  }
  if (fault === 'stall' || fault === 'cut') {
    head(res, signal, 200, { ...h, 'content-length': body.length });
    await flushWrite(res, body.subarray(0, Math.floor(body.length / 2)));
    if (fault === 'cut') {
      if (afterMs !== null && !(await sleep(afterMs, signal))) return;
      res.destroy();
      return;
    }
    if (!(await sleep(afterMs ?? stallMs, signal))) return;
    end(res, signal, body.subarray(Math.floor(body.length / 2)));
    return;
  }
  head(res, signal, 200, { ...h, 'content-length': body.length });
  end(res, signal, body);
}

/** The SSE stream, first frame after ttft, content deltas paced over the generation time. */
export async function writeStream(
  res: ServerResponse,
  plan: Plan,
  headers: Record<string, string>,
  fault: FaultKind | null,
  afterMs: number | null,
  stallMs: number,
  signal: RequestLife,
): Promise<void> {
  const { frames, deltaStart, deltaEnd } = renderStream(plan.completion);
  const nDeltas = deltaEnd - deltaStart;
  // the fault point: the middle content delta (or the first frame after the prelude)
  const mid = deltaStart + Math.floor(nDeltas / 2);
  if (fault === 'malformed') {
    const f = frames[mid]!;
    frames[mid] = f.slice(0, Math.max(8, Math.floor(f.length / 2))) + '\n\n';
  }
  if (!(await sleep(plan.ttftMs, signal))) return;
  head(res, signal, 200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
  });
  const instant = plan.generationMs === 0 && fault !== 'stall' && fault !== 'cut';
  if (instant) {
    end(res, signal, frames.join(''));
    return;
  }
  // frame i (a content delta) is due at ttft + generation · (i − deltaStart + 1) / nDeltas
  const due = (i: number) =>
    i < deltaStart
      ? 0
      : nDeltas === 0
        ? plan.generationMs
        : (plan.generationMs * Math.min(nDeltas, i - deltaStart + 1)) / nDeltas;
  let start = performance.now();
  let i = 0;
  while (i < frames.length) {
    if ((fault === 'stall' || fault === 'cut') && i === mid) {
      if (fault === 'cut') {
        if (afterMs !== null && !(await sleep(afterMs, signal))) return;
        res.destroy();
        return;
      }
      const stallStart = performance.now();
      if (!(await sleep(afterMs ?? stallMs, signal))) return;
      start += performance.now() - stallStart; // resume at the normal pace, not in a burst
      fault = null; // continue normally after the stall
    }
    const elapsed = performance.now() - start;
    let chunk = '';
    const stopAt =
      fault === 'stall' || fault === 'cut' ? Math.min(frames.length, i < mid ? mid : frames.length) : frames.length;
    while (i < stopAt && due(i) <= elapsed) chunk += frames[i++]!;
    // before a cut or stall, make sure what precedes it has reached the socket
    if (chunk) {
      if (i === mid && (fault === 'stall' || fault === 'cut')) await flushWrite(res, chunk);
      else res.write(chunk);
    }
    if (i >= frames.length) break;
    if (i === mid && (fault === 'stall' || fault === 'cut')) continue;
    if (!(await sleep(Math.max(1, due(i) - (performance.now() - start)), signal))) return;
  }
  end(res, signal);
}
