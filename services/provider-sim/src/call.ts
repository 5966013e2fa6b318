import type { ServerResponse } from 'node:http';
import { setTimeout as sleepTimer } from 'node:timers/promises';

/**
 * One API call as the sim saw it, for `GET /sim/calls` and `calls()`.
 * - `seq`: 1-based arrival order (reset by `reset()`)
 * - `model`: the model name as requested ('' when the body had none)
 * - `api`: `openai.chat` | `openai.responses` | `anthropic.messages` | `openrouter.chat`
 * - `requestHash`: contracts `itemHash(api, path, body)` of the request ('' when not JSON)
 * - `startedAtMs` / `endedAtMs`: wall clock (epoch ms); `endedAtMs` null while in flight
 * - `status`: HTTP status sent; 0 when none was sent (e.g. a hang the client gave up on)
 * - `fault`: the injected or enforced fault (`rate_limit` also for an enforced RPM/TPM 429)
 * - `authPresent`: an `Authorization` or `x-api-key` header was present (values never kept)
 */
export interface SimCall {
  seq: number;
  model: string;
  api: string;
  path: string;
  requestHash: string;
  startedAtMs: number;
  endedAtMs: number | null;
  status: number;
  fault: string | null;
  stream: boolean;
  authPresent: boolean;
}

/**
 * The life of one request: ended when the client goes away or the server closes. The
 * AbortController is made only when something actually sleeps (most requests never do).
 */
export class RequestLife {
  ended = false;
  constructor(readonly call: SimCall) {}
  private ac: AbortController | null = null;
  /** aborts when the request ends (made on first use) */
  get signal(): AbortSignal {
    this.ac ??= new AbortController();
    if (this.ended) this.ac.abort();
    return this.ac.signal;
  }
  /** Ends the request: pending and later sleeps resolve false. */
  end(): void {
    this.ended = true;
    this.ac?.abort();
  }
}

/** Sleeps `ms` unless the request ends first; resolves false when it ended. */
export async function sleep(ms: number, life: RequestLife): Promise<boolean> {
  if (life.ended) return false;
  if (ms <= 0) return true;
  try {
    await sleepTimer(ms, undefined, { signal: life.signal });
    return true;
  } catch {
    return false;
  }
}

/** Writes the status line and headers and records the status in the call log right away. */
export function head(
  res: ServerResponse,
  life: RequestLife,
  status: number,
  headers: Record<string, string | number>,
): void {
  res.writeHead(status, headers);
  life.call.status = status;
}

/** Ends the response and records the end time in the call log right away. */
export function end(res: ServerResponse, life: RequestLife, data?: string | Uint8Array): void {
  if (data === undefined) res.end();
  else res.end(data);
  life.call.endedAtMs = Date.now();
}
