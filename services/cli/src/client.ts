import type { z } from 'zod';
import { CliError, EXIT, exitForStatus } from './exit-codes.js';

const NET_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ECONNRESET: 'connection reset',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'the connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
};

/**
 * Why a fetch failed, in words with the system code: fetch throws `TypeError('fetch failed')` whose
 * `cause` is the socket error — or an AggregateError of one per address tried (localhost: ::1 and
 * 127.0.0.1) — and a timeout is an AbortSignal `TimeoutError`. e.g. "connection refused (ECONNREFUSED)".
 */
export function describeFetchFailure(e: unknown, timeoutMs: number): string {
  const err = e as { name?: string; message?: string; cause?: unknown };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError')
    return `no answer within ${timeoutMs} ms (--timeout-ms)`;
  const causes: { code?: string; message?: string }[] = [];
  const walk = (c: unknown, depth: number) => {
    if (!c || typeof c !== 'object' || depth > 3) return;
    const x = c as { code?: string; message?: string; errors?: unknown[]; cause?: unknown };
    if (x.code) causes.push(x);
    for (const sub of x.errors ?? []) walk(sub, depth + 1);
    walk(x.cause, depth + 1);
  };
  walk(err?.cause, 0);
  const c = causes[0];
  if (c?.code) return `${NET_CODES[c.code] ?? c.message ?? 'network error'} (${c.code})`;
  const inner = (err?.cause as { message?: string } | undefined)?.message;
  return inner ?? err?.message ?? String(e);
}

/** Where and how to reach the control API. */
export interface ClientOptions {
  /** base URL, e.g. http://127.0.0.1:8090 */
  url: string;
  /** bearer API key; never printed */
  apiKey: string | undefined;
  /** per-request timeout, ms (default 30,000) */
  timeoutMs?: number;
}

/** A control API answer. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json<T = unknown>(): T;
}

/**
 * Minimal client over the control REST API (fetch). Non-2xx answers throw CliError with the exit
 * code for the status and the server's `{error:{code,message}}` in the message; connection
 * failures throw CliError(69).
 */
export class ControlClient {
  constructor(private readonly o: ClientOptions) {}

  /**
   * @param allow statuses returned instead of thrown (e.g. 404 for report_not_ready polling)
   * @throws CliError
   */
  async request(method: string, path: string, body?: unknown, allow: number[] = []): Promise<ApiResponse> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.o.apiKey) headers['authorization'] = `Bearer ${this.o.apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(new URL(path, this.o.url.endsWith('/') ? this.o.url : `${this.o.url}/`), {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 30_000),
      });
    } catch (e) {
      throw new CliError(
        EXIT.unavailable,
        `cannot reach the control API at ${this.o.url}: ${describeFetchFailure(e, this.o.timeoutMs ?? 30_000)} — is \`shadowplane control\` running there, and are --url / SHADOWPLANE_URL right?`,
      );
    }
    const text = await res.text();
    const r: ApiResponse = {
      status: res.status,
      headers: res.headers,
      text,
      json<T>() {
        return JSON.parse(text) as T;
      },
    };
    if (res.ok || allow.includes(res.status)) return r;
    let code = `http_${res.status}`;
    let message = text.slice(0, 500);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
      const err = (parsed as { error?: { code?: string; message?: string } }).error;
      if (err?.code) code = err.code;
      if (err?.message) message = err.message;
    } catch {
      /* not JSON */
    }
    throw new CliError(exitForStatus(res.status), `${code}: ${message}`, parsed);
  }

  /**
   * GET `path` and check the answer against `view`, the control API's response schema
   * (libs/contracts api-views).
   * @throws CliError as {@link request}, and exit 1 when the answer does not match the schema
   */
  async get<S extends z.ZodType>(view: S, path: string): Promise<z.infer<S>> {
    return checkView(view, (await this.request('GET', path)).json(), `GET ${path}`);
  }

  /** POST `body` to `path` and check the answer against `view` (as {@link get}). */
  async post<S extends z.ZodType>(view: S, path: string, body?: unknown): Promise<z.infer<S>> {
    return checkView(view, (await this.request('POST', path, body)).json(), `POST ${path}`);
  }
}

/**
 * `value`, checked against the response schema `view` (libs/contracts api-views: the same schemas
 * control's OpenAPI document is generated from), returned as it came: fields the schema does not
 * name are kept, so `--json` prints the whole answer.
 * @param what the request, for the error (e.g. "GET /v1/campaigns")
 * @throws CliError(EXIT.error) naming the first mismatching field — a control API of another
 *   version, or not the control API at all
 */
export function checkView<S extends z.ZodType>(view: S, value: unknown, what: string): z.infer<S> {
  const r = view.safeParse(value);
  if (r.success) return value as z.infer<S>;
  const issue = r.error.issues[0];
  const at = issue && issue.path.length > 0 ? issue.path.join('.') : '(the body)';
  throw new CliError(
    EXIT.error,
    `the control API's answer to ${what} is not what this shadowctl expects at ${at}: ${issue?.message ?? 'invalid'} — are shadowctl and the control API the same version?`,
    value,
  );
}
