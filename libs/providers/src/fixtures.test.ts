// Table-driven test over every recorded provider response in test/fixtures/providers/. The expected
// values live in ../test/fixture-expectations.json and were read by hand from each file.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Api, RateCard } from '@shadowplane/contracts';
import { classifyError, createResponseParser, createSseDecoder, parseResponse, resolveCost } from './index.js';
import type { ParsedResponse, ResponseMeta, SseEvent } from './index.js';
import { createRng } from '@shadowplane/stats';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/providers/', import.meta.url));
const EXPECTED = JSON.parse(readFileSync(new URL('../test/fixture-expectations.json', import.meta.url), 'utf8')) as {
  rate_card: RateCard;
  bodies: Array<Record<string, any> & { file: string; api: Api; status: number; sidecar: boolean }>;
  headers_only: Array<{ file: string; status: number; error_class: string; retry_after_s: number | null }>;
};

function metaFor(file: string, status: number, sidecar: boolean): ResponseMeta {
  const side = `${FIXTURES}${file.replace(/\.(json|sse)$/, '')}.headers.json`;
  expect(existsSync(side)).toBe(sidecar);
  if (!sidecar) return { status, headers: [] };
  const h = JSON.parse(readFileSync(side, 'utf8')) as { status: number; headers: [string, string][] };
  expect(h.status).toBe(status);
  return { status: h.status, headers: h.headers };
}

function allFixtureFiles(): string[] {
  const out: string[] = [];
  for (const dir of readdirSync(FIXTURES)) for (const f of readdirSync(`${FIXTURES}${dir}`)) out.push(`${dir}/${f}`);
  return out.sort();
}

describe('fixture table', () => {
  it('covers every file in test/fixtures/providers/', () => {
    const covered = new Set<string>();
    for (const b of EXPECTED.bodies) {
      covered.add(b.file);
      if (b.sidecar) covered.add(`${b.file.replace(/\.(json|sse)$/, '')}.headers.json`);
    }
    for (const h of EXPECTED.headers_only) covered.add(h.file);
    expect(allFixtureFiles().filter((f) => !covered.has(f))).toEqual([]);
    expect([...covered].filter((f) => !existsSync(`${FIXTURES}${f}`))).toEqual([]);
  });

  for (const exp of EXPECTED.bodies) {
    it(`${exp.file}: usage, cost, echo, abandoned and error class match the hand-read values`, () => {
      const meta = metaFor(exp.file, exp.status, exp.sidecar);
      const r = parseResponse(exp.api, meta, readFileSync(`${FIXTURES}${exp.file}`));
      const { raw, ...usage } = r.usage;
      expect(usage).toEqual(exp['usage']);
      // raw is the provider's block verbatim (or null only when there was none)
      expect(raw === null).toBe(exp['abandoned'] === true || exp['status'] !== 200);
      expect(r.status).toBe(exp.status);
      expect(r.stream).toBe(exp['stream']);
      expect(r.providerCostUsd).toBe(exp['provider_cost_usd']);
      expect(r.upstream).toBe(exp['upstream']);
      expect(r.model).toBe(exp['model']);
      expect(r.responseId).toBe(exp['response_id']);
      expect(r.finishReason).toBe(exp['finish_reason']);
      expect(r.outputText.length).toBe(exp['output_chars']);
      if ('output_text' in exp) expect(r.outputText).toBe(exp['output_text']);
      if ('output_prefix' in exp) expect(r.outputText.startsWith(exp['output_prefix'])).toBe(true);
      if ('output_suffix' in exp) expect(r.outputText.endsWith(exp['output_suffix'])).toBe(true);
      expect(r.toolCalls).toEqual(exp['tool_calls']);
      expect(r.complete).toBe(exp['complete']);
      expect(r.abandoned).toBe(exp['abandoned']);
      expect(r.errorClass).toBe(exp['error_class']);
      expect(r.retryAfterS).toBe(exp['retry_after_s']);
      if ('error_message' in exp) expect(r.errorMessage).toBe(exp['error_message']);
      if ('error_message_prefix' in exp) expect(r.errorMessage?.startsWith(exp['error_message_prefix'])).toBe(true);
      expect(r.ttftMs).toBeNull();
      expect(resolveCost(r, EXPECTED.rate_card)).toEqual(exp['cost']);
    });
  }

  for (const h of EXPECTED.headers_only) {
    it(`${h.file}: a header-only 429 classifies as ${h.error_class} with retry_after ${h.retry_after_s}`, () => {
      const side = JSON.parse(readFileSync(`${FIXTURES}${h.file}`, 'utf8')) as {
        status: number;
        headers: [string, string][];
      };
      expect(side.status).toBe(h.status);
      const c = classifyError(side.status, side.headers, '');
      expect(c.errorClass).toBe(h.error_class);
      expect(c.retryAfterS).toBe(h.retry_after_s);
      expect(c.message).toBeNull();
    });
  }
});

// ---- chunking: any split gives the same events and the same result ----

function sseEvents(chunks: Uint8Array[]): SseEvent[] {
  const evs: SseEvent[] = [];
  const d = createSseDecoder({ onEvent: (e) => evs.push(e) });
  for (const c of chunks) d.push(c);
  d.end();
  return evs;
}

function parseChunks(api: Api, meta: ResponseMeta, chunks: Uint8Array[]): ParsedResponse {
  const p = createResponseParser(api, meta);
  for (const c of chunks) p.push(c);
  return p.end();
}

describe('chunk boundaries', () => {
  for (const exp of EXPECTED.bodies) {
    it(`${exp.file}: split at every byte offset and in random 1–7 byte chunks parses the same as one piece`, () => {
      const meta = metaFor(exp.file, exp.status, exp.sidecar);
      const bytes = new Uint8Array(readFileSync(`${FIXTURES}${exp.file}`));
      const whole = parseResponse(exp.api, meta, bytes);
      const wholeEvents = exp['stream'] ? sseEvents([bytes]) : [];
      if (exp['stream']) expect(wholeEvents.length).toBeGreaterThan(1);
      const wholeText = JSON.stringify(whole);
      const wholeEventsText = JSON.stringify(wholeEvents);
      for (let i = 0; i <= bytes.length; i++) {
        const chunks = [bytes.subarray(0, i), bytes.subarray(i)];
        const r = parseChunks(exp.api, meta, chunks);
        // compare as text first (cheap), and let expect() print the difference only when they differ
        if (JSON.stringify(r) !== wholeText) expect({ offset: i, r }).toEqual({ offset: i, r: whole });
        if (exp['stream']) {
          const evs = sseEvents(chunks);
          if (JSON.stringify(evs) !== wholeEventsText)
            expect({ offset: i, evs }).toEqual({ offset: i, evs: wholeEvents });
        }
      }
      const rand = createRng(bytes.length);
      for (let round = 0; round < 12; round++) {
        const chunks: Uint8Array[] = [];
        for (let i = 0; i < bytes.length;) {
          const n = 1 + Math.floor(rand() * 7);
          chunks.push(bytes.subarray(i, i + n));
          i += n;
        }
        expect(parseChunks(exp.api, meta, chunks)).toEqual(whole);
        if (exp['stream']) expect(sseEvents(chunks)).toEqual(wholeEvents);
      }
    });
  }
});

// ---- SSE framing variants of the real streams ----

describe('SSE framing', () => {
  const streams = EXPECTED.bodies.filter((b) => b['stream'] === true);
  const enc = new TextEncoder();
  for (const exp of streams) {
    const meta = () => metaFor(exp.file, exp.status, exp.sidecar);
    const text = () => readFileSync(`${FIXTURES}${exp.file}`, 'utf8');

    it(`${exp.file}: CRLF and bare-CR line ends parse the same as LF`, () => {
      const whole = parseResponse(exp.api, meta(), text());
      expect(parseResponse(exp.api, meta(), text().replace(/\n/g, '\r\n'))).toEqual(whole);
      expect(parseResponse(exp.api, meta(), text().replace(/\n/g, '\r'))).toEqual(whole);
      // CRLF split between the CR and the LF of every line end
      const crlf = enc.encode(text().replace(/\n/g, '\r\n'));
      const chunks: Uint8Array[] = [];
      let last = 0;
      crlf.forEach((b, i) => {
        if (b === 0x0d) {
          chunks.push(crlf.subarray(last, i + 1));
          last = i + 1;
        }
      });
      chunks.push(crlf.subarray(last));
      expect(parseChunks(exp.api, meta(), chunks)).toEqual(whole);
    });

    it(`${exp.file}: comment and keep-alive lines between events change nothing`, () => {
      const whole = parseResponse(exp.api, meta(), text());
      const withComments = `: keep-alive\n\n${text().replace(/\n\n/g, '\n\n: ping\n\n:\n\n')}`;
      expect(parseResponse(exp.api, meta(), withComments)).toEqual(whole);
    });

    it(`${exp.file}: a final event without its trailing blank line is still read`, () => {
      const whole = parseResponse(exp.api, meta(), text());
      const trimmed = text().replace(/\n+$/, '');
      expect(parseResponse(exp.api, meta(), trimmed)).toEqual(whole);
    });

    it(`${exp.file}: data split over several data: lines is joined with newlines`, () => {
      const whole = parseResponse(exp.api, meta(), text());
      // JSON allows a newline between tokens: break each data payload after its first comma.
      const multi = text().replace(/^data: (\{[^,\n]*,)/gm, 'data: $1\ndata: ');
      expect(multi).not.toBe(text());
      expect(parseResponse(exp.api, meta(), multi)).toEqual(whole);
    });
  }
});
