import { Lru } from './tokens.js';

/**
 * Sliding-window request and token limits for one model (RPM / TPM over `windowMs`; 60 000 ms
 * is the real minute, tests shorten it). Tokens counted are input + output of served requests.
 * Source: OpenAI "Rate limits" guide (requests and tokens per minute, x-ratelimit-* headers).
 */
export class SlidingWindowLimiter {
  private times: number[] = [];
  private tokens: number[] = [];
  private head = 0;
  private usedTokens = 0;

  constructor(
    readonly rpm: number,
    readonly tpm: number,
    readonly windowMs: number,
  ) {}

  private evict(nowMs: number): void {
    const cutoff = nowMs - this.windowMs;
    while (this.head < this.times.length && this.times[this.head]! <= cutoff) {
      this.usedTokens -= this.tokens[this.head]!;
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.tokens = this.tokens.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Checks whether one more request with `inputTokens` fits.
   * @returns `{ ok: true }` or `{ ok: false, limit, retryAfterMs }` (ms until it would fit)
   */
  check(
    nowMs: number,
    inputTokens: number,
  ): { ok: true } | { ok: false; limit: 'requests' | 'tokens'; retryAfterMs: number } {
    this.evict(nowMs);
    const count = this.times.length - this.head;
    if (count + 1 > this.rpm) {
      return {
        ok: false,
        limit: 'requests',
        retryAfterMs: Math.max(1, this.times[this.head]! + this.windowMs - nowMs),
      };
    }
    if (this.usedTokens + inputTokens > this.tpm) {
      // wait until enough of the oldest entries leave the window (or a full window if it never fits)
      let freed = 0;
      const need = this.usedTokens + inputTokens - this.tpm;
      for (let i = this.head; i < this.times.length; i++) {
        freed += this.tokens[i]!;
        if (freed >= need)
          return { ok: false, limit: 'tokens', retryAfterMs: Math.max(1, this.times[i]! + this.windowMs - nowMs) };
      }
      return { ok: false, limit: 'tokens', retryAfterMs: this.windowMs };
    }
    return { ok: true };
  }

  /** Records a served request of `tokens` tokens at `nowMs`. */
  record(nowMs: number, tokens: number): void {
    this.times.push(nowMs);
    this.tokens.push(tokens);
    this.usedTokens += tokens;
  }

  /** Current headroom and the ms until the oldest request / token leaves the window. */
  state(nowMs: number): {
    remainingRequests: number;
    remainingTokens: number;
    resetRequestsMs: number;
    resetTokensMs: number;
  } {
    this.evict(nowMs);
    const count = this.times.length - this.head;
    const oldest = count > 0 ? Math.max(0, this.times[this.head]! + this.windowMs - nowMs) : 0;
    return {
      remainingRequests: Math.max(0, this.rpm - count),
      remainingTokens: Math.max(0, this.tpm - this.usedTokens),
      resetRequestsMs: oldest,
      resetTokensMs: this.usedTokens > 0 ? oldest : 0,
    };
  }
}

/**
 * Formats a duration the way OpenAI's `x-ratelimit-reset-*` headers do: `2ms`, `1.5s`, `6m0s`.
 */
export function openaiDuration(ms: number): string {
  const m = Math.max(0, Math.round(ms));
  if (m < 1000) return `${m}ms`;
  const totalS = m / 1000;
  const minutes = Math.floor(totalS / 60);
  const s = Number((totalS - minutes * 60).toFixed(3));
  return minutes > 0 ? `${minutes}m${s}s` : `${s}s`;
}

/**
 * Prompt-prefix cache of one model: a prompt of ≥ `minTokens` tokens is cached in blocks of
 * `blockTokens` (boundaries minTokens, minTokens + block, …); a later prompt sharing a cached
 * boundary prefix within `ttlMs` reads that many tokens from cache. Each hit refreshes the TTL.
 * Source: OpenAI "Prompt caching" guide (1024-token minimum, 128-token increments); Anthropic
 * "Prompt caching" (5-minute TTL refreshed on use; first use writes the cache).
 */
export class PromptCache {
  private readonly entries = new Lru<string, number>(200_000);

  constructor(
    readonly minTokens: number,
    readonly blockTokens: number,
    readonly ttlMs: number,
  ) {}

  /**
   * Looks up and (re)writes the prefixes of a prompt.
   * @param ids the prompt's token ids, message by message
   * @param nowMs wall clock (ms)
   * @returns `read`: tokens served from cache; `cacheable`: the longest cacheable prefix (so a
   *   cache write of `cacheable − read` tokens happened now)
   */
  touch(ids: readonly (readonly number[])[], nowMs: number): { read: number; cacheable: number } {
    let total = 0;
    for (const m of ids) total += m.length;
    if (total < this.minTokens) return { read: 0, cacheable: 0 };
    const keys: [number, string][] = [];
    let h1 = 0x811c9dc5;
    let h2 = 0x01000193;
    let n = 0;
    let next = this.minTokens;
    for (const m of ids) {
      for (const id of m) {
        h1 = Math.imul(h1 ^ id, 0x01000193) >>> 0;
        h2 = Math.imul(h2 ^ (id + 0x9e3779b9), 0x85ebca6b) >>> 0;
        n++;
        if (n === next) {
          keys.push([n, `${h1.toString(36)}.${h2.toString(36)}.${n}`]);
          next += this.blockTokens;
        }
      }
    }
    let read = 0;
    for (let i = keys.length - 1; i >= 0; i--) {
      const exp = this.entries.get(keys[i]![1]);
      if (exp !== undefined && exp > nowMs) {
        read = keys[i]![0];
        break;
      }
    }
    for (const [, k] of keys) this.entries.set(k, nowMs + this.ttlMs);
    return { read, cacheable: keys.at(-1)?.[0] ?? 0 };
  }
}
