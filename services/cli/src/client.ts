import { CliError, EXIT, exitForStatus } from './exit-codes.js';

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
      const cause = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).name;
      throw new CliError(EXIT.unavailable, `cannot reach the control API at ${this.o.url} (${cause})`);
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

  async get<T>(path: string): Promise<T> {
    return (await this.request('GET', path)).json<T>();
  }

  async post<T>(path: string, body?: unknown): Promise<T> {
    return (await this.request('POST', path, body)).json<T>();
  }
}
