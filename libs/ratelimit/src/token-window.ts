import { Redis } from 'ioredis';

/**
 * A sliding-window token budget: a call is admitted only when the tokens admitted in the last
 * `windowMs` (by start time) plus its own weight stay ≤ `tpm`; after the call its entry is
 * corrected to the tokens it actually used. So no window of length `windowMs` ever holds more than
 * `tpm` admitted tokens (estimates for calls still running or without reported usage, actual
 * usage for the rest). A weight above `tpm` is admitted alone in an otherwise empty window.
 * Source: sliding-window log rate limiting (exact, one entry per call in the window).
 */
export interface TokenWindow {
  /** Records `weight` tokens now if they fit (`{ id }`), else says how long to wait (`{ waitMs }`, > 0). */
  tryAcquire(weight: number): Promise<{ id: string } | { waitMs: number }>;
  /** Sets the tokens of an admitted entry to `tokens` (the call's actual usage); unknown ids are ignored. */
  correct(id: string, tokens: number): Promise<void>;
}

interface Entry {
  at: number;
  tokens: number;
}

let seq = 0;

/**
 * ms until `weight` fits given `entries` (start ms, tokens) at `now`; 0 = fits now. Entries leave
 * the window `windowMs` after their start, oldest first.
 */
export function waitForFit(entries: Entry[], weight: number, tpm: number, windowMs: number, now: number): number {
  const live = entries.filter((e) => e.at > now - windowMs).sort((a, b) => a.at - b.at);
  const need = Math.min(weight, tpm);
  let sum = live.reduce((a, e) => a + e.tokens, 0);
  if (sum + need <= tpm) return 0;
  for (const e of live) {
    sum -= e.tokens;
    if (sum + need <= tpm) return Math.max(1, e.at + windowMs - now + 1);
  }
  return 1;
}

/** In-process window (one limiter, this process). */
export function localTokenWindow(tpm: number, windowMs: number): TokenWindow {
  const entries = new Map<string, Entry>();
  return {
    async tryAcquire(weight) {
      const now = Date.now();
      for (const [k, e] of entries) if (e.at <= now - windowMs) entries.delete(k);
      const waitMs = waitForFit([...entries.values()], weight, tpm, windowMs, now);
      if (waitMs > 0) return { waitMs };
      const id = `l${++seq}`;
      entries.set(id, { at: now, tokens: Math.min(weight, tpm) });
      return { id };
    },
    async correct(id, tokens) {
      const e = entries.get(id);
      if (e) e.tokens = Math.max(0, tokens);
    },
  };
}

// KEYS[1] = hash of entry id → "startMs:tokens"; ARGV = tpm, windowMs, weight, new entry id.
// Redis TIME is the clock, so every process shares one. Returns 0 (admitted) or ms to wait.
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tpm, win, w = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if w > tpm then w = tpm end
local all = redis.call('HGETALL', KEYS[1])
local live, sum = {}, 0
for i = 1, #all, 2 do
  local s, n = string.match(all[i + 1], '^(%d+):(%d+)$')
  s, n = tonumber(s), tonumber(n)
  if s <= now - win then redis.call('HDEL', KEYS[1], all[i]) else
    live[#live + 1] = { s, n }
    sum = sum + n
  end
end
if sum + w <= tpm then
  redis.call('HSET', KEYS[1], ARGV[4], now .. ':' .. w)
  redis.call('PEXPIRE', KEYS[1], win * 2)
  return 0
end
table.sort(live, function(a, b) return a[1] < b[1] end)
for _, e in ipairs(live) do
  sum = sum - e[2]
  if sum + w <= tpm then return math.max(1, e[1] + win - now + 1) end
end
return 1
`;
// KEYS[1] as above; ARGV = entry id, tokens. Keeps the start time, replaces the tokens.
const CORRECT_LUA = `
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local s = string.match(v, '^(%d+):')
redis.call('HSET', KEYS[1], ARGV[1], s .. ':' .. ARGV[2])
return 1
`;

const clients = new Map<string, Redis>();

/** Window shared by every process using the same `id` through Redis (atomic Lua scripts). */
export function redisTokenWindow(url: string, id: string, tpm: number, windowMs: number): TokenWindow {
  let client = clients.get(url);
  if (!client) {
    client = new Redis(url, { maxRetriesPerRequest: 3 });
    client.on('error', () => undefined); // failures surface on acquire(); never crash the process
    clients.set(url, client);
  }
  const c = client;
  const key = `shadowplane-tpm:${id}`;
  const instance = `${process.pid}.${Math.random().toString(36).slice(2, 10)}`;
  return {
    async tryAcquire(weight) {
      const id = `${instance}.${++seq}`;
      const waitMs = Number(await c.eval(ACQUIRE_LUA, 1, key, tpm, windowMs, Math.max(0, Math.ceil(weight)), id));
      return waitMs === 0 ? { id } : { waitMs };
    },
    async correct(eid, tokens) {
      await c.eval(CORRECT_LUA, 1, key, eid, Math.max(0, Math.ceil(tokens)));
    },
  };
}

/** Disconnects the Redis clients token windows of this process use (at shutdown). */
export async function closeTokenWindowClients(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(all.map((c) => c.quit().catch(() => c.disconnect())));
}
