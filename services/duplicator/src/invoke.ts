import { performance } from 'node:perf_hooks';
import { request, type Dispatcher } from 'undici';
import type { Api, ErrorClass, RateCard } from '@shadowplane/contracts';
import { createResponseParser, promptTokensUpperBound, resolveCost, type ParsedResponse } from '@shadowplane/providers';

/** Most response bytes kept verbatim for the artifact (`response_raw`); longer responses keep none. */
export const MAX_RAW_BYTES = 1024 * 1024;

/** One provider call's outcome. Times: epoch ms (`startedAtMs`, `endedAtMs`) and durations in ms. */
export interface AttemptOutcome {
  /** HTTP status, or null when no response arrived */
  status: number | null;
  /** the parsed response (partial when cut or timed out), or null when no response arrived */
  parsed: ParsedResponse | null;
  /** null = success */
  errorClass: ErrorClass | null;
  errorMessage: string | null;
  retryAfterS: number | null;
  startedAtMs: number;
  endedAtMs: number;
  latencyMs: number;
  ttftMs: number | null;
  /** the response body text when ≤ MAX_RAW_BYTES (for the encrypted artifact) */
  rawText: string | null;
  /** true when the request may have reached the provider (anything but a refused connection) */
  maybeSent: boolean;
}

/** What to call: URL, headers, JSON body, wire API, timeouts (ms). */
export interface CallSpec {
  url: string;
  api: Api;
  headers: Record<string, string>;
  body: unknown;
  firstByteTimeoutMs: number;
  stallTimeoutMs: number;
  dispatcher?: Dispatcher | undefined;
}

const nowMs = () => performance.timeOrigin + performance.now();

/**
 * Sends one POST and reads the whole response through the libs/providers parser. Never throws.
 * - no first body byte within `firstByteTimeoutMs` of sending, or no byte for `stallTimeoutMs`
 *   mid-body → aborted, `hang_timeout` (the partial response is still parsed);
 * - a connection error → `network_error` (`maybeSent` false only for ECONNREFUSED);
 * - otherwise the parser's error class (`rate_limited`, `upstream_5xx`, `stream_cut`, ...).
 * Timeouts are our own timers (undici's are disabled) so both apply to streams and JSON alike.
 */
export async function callOnce(spec: CallSpec): Promise<AttemptOutcome> {
  const startedAtMs = nowMs();
  const t0 = performance.now();
  const ac = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, spec.firstByteTimeoutMs);
  const arm = (ms: number) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      ac.abort();
    }, ms);
  };
  let parser: ReturnType<typeof createResponseParser> | null = null;
  let status: number | null = null;
  const chunks: Buffer[] = [];
  let rawBytes = 0;
  let netErr: { code: string; message: string } | null = null;
  try {
    const res = await request(spec.url, {
      method: 'POST',
      headers: spec.headers,
      body: JSON.stringify(spec.body),
      signal: ac.signal,
      headersTimeout: 0,
      bodyTimeout: 0,
      ...(spec.dispatcher ? { dispatcher: spec.dispatcher } : {}),
    });
    status = res.statusCode;
    parser = createResponseParser(
      spec.api,
      { status: res.statusCode, headers: res.headers as Record<string, string | string[] | undefined> },
      t0,
    );
    for await (const chunk of res.body) {
      const b = chunk as Buffer;
      arm(spec.stallTimeoutMs);
      parser.push(b, performance.now());
      if (rawBytes + b.byteLength <= MAX_RAW_BYTES) chunks.push(b);
      rawBytes += b.byteLength;
    }
  } catch (e) {
    if (!timedOut) {
      const err = e as { code?: string; message?: string; cause?: { code?: string } };
      netErr = { code: err.code ?? err.cause?.code ?? 'UNKNOWN', message: err.message ?? String(e) };
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
  const endedAtMs = nowMs();
  const latencyMs = performance.now() - t0;
  const parsed = parser ? parser.end(performance.now()) : null;
  let errorClass: ErrorClass | null = parsed ? parsed.errorClass : null;
  let errorMessage = parsed ? parsed.errorMessage : null;
  if (timedOut) {
    errorClass = 'hang_timeout';
    errorMessage =
      status === null || rawBytes === 0
        ? `no first byte within ${spec.firstByteTimeoutMs} ms`
        : `stalled for ${spec.stallTimeoutMs} ms`;
  } else if (netErr) {
    // a reset after a 2xx began streaming is a cut stream; before any response it is a network error
    errorClass = status !== null && status >= 200 && status < 300 ? 'stream_cut' : 'network_error';
    errorMessage = `${netErr.code}: ${netErr.message}`;
  } else if (parsed === null) {
    errorClass = 'network_error';
  }
  return {
    status,
    parsed,
    errorClass,
    errorMessage,
    retryAfterS: parsed?.retryAfterS ?? null,
    startedAtMs,
    endedAtMs,
    latencyMs,
    ttftMs: parsed?.ttftMs ?? null,
    rawText: rawBytes <= MAX_RAW_BYTES && rawBytes > 0 ? Buffer.concat(chunks).toString('utf8') : null,
    maybeSent: !(netErr !== null && status === null && netErr.code === 'ECONNREFUSED'),
  };
}

/** True for the error classes a retry may fix (429, 529/overloaded, 5xx). */
export function isRetryable(c: ErrorClass | null): boolean {
  return c === 'rate_limited' || c === 'overloaded' || c === 'upstream_5xx';
}

/**
 * What one attempt is charged, in micro-USD, or `'reserved'` = its upper bound (cost unknown):
 * - a 2xx whose cost resolves (provider-reported, else the arm's rate card on reported usage)
 *   → that cost; a 2xx without a resolvable cost (no usage: abandoned, cut, malformed) → upper bound;
 * - 429 and 529 (admission refusals) and other 4xx (request refused) → 0: the provider generated
 *   nothing (OpenAI and Anthropic bill processed tokens only);
 * - 5xx, `hang_timeout`, and connection errors after the request may have been sent → upper bound
 *   (the provider may have processed it; a crash or doubt never frees money, docs/architecture.md rule 6);
 * - a refused connection (nothing sent) → 0;
 * - any non-2xx whose body carries `usage` (OpenRouter reports it for calls that failed after
 *   generation began): the provider billed it, so it is costed like a 2xx (provider cost, else
 *   the rate card on the reported tokens), or the upper bound when that cost does not resolve.
 */
export function attemptCharge(o: AttemptOutcome, card: RateCard | undefined): number | 'reserved' {
  if (o.errorClass === 'hang_timeout') return 'reserved';
  if (o.status === null) return o.maybeSent ? 'reserved' : 0;
  if ((o.status >= 200 && o.status < 300) || (o.parsed !== null && o.parsed.usage.raw !== null)) {
    const c = o.parsed ? resolveCost(o.parsed, card) : null;
    return c && c.micro_usd !== null ? c.micro_usd : 'reserved';
  }
  if (o.status >= 400 && o.status < 500) return 0;
  if (o.status === 529) return 0;
  return 'reserved';
}

/**
 * Tokens a call actually used, for correcting the TPM window after it (input + output as the
 * provider reported them); null when the call got no response or either count is unreported,
 * so the bound stays counted.
 */
export function usedTokens(out: AttemptOutcome | null): number | null {
  const u = out?.parsed?.usage;
  if (!u || u.input_tokens === null || u.output_tokens === null) return null;
  return u.input_tokens + u.output_tokens;
}

/**
 * The TPM weight a call is admitted on: its token bound, `promptTokensUpperBound` (bytes, libs/providers)
 * + the output cap. Loose on purpose: the limiter corrects it to {@link usedTokens} after the call.
 */
export function tpmWeight(body: unknown, maxOutputTokens: number): number {
  return promptTokensUpperBound(body) + maxOutputTokens;
}
