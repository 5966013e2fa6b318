import { encode, decode } from 'gpt-tokenizer';

/**
 * Token counting with the real o200k_base BPE (gpt-tokenizer's default encoding, the one GPT-4o
 * and later use). Anthropic's tokenizer is not public; the sim uses o200k for every API, a
 * documented approximation. Encodings are cached (bounded LRU) because tokenising is the most
 * expensive thing the sim does (~0.5 µs per character).
 */

/** A bounded least-recently-inserted cache (Map order); good enough for hot repeated prompts. */
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(k: K): V | undefined {
    return this.map.get(k);
  }
  set(k: K, v: V): void {
    if (this.map.size >= this.max) {
      const first = this.map.keys().next();
      if (!first.done) this.map.delete(first.value);
    }
    this.map.set(k, v);
  }
}

const encodeCache = new Lru<string, readonly number[]>(20_000);

/** The o200k token ids of `text` (cached; do not mutate the result). */
export function tokenIds(text: string): readonly number[] {
  let ids = encodeCache.get(text);
  if (ids === undefined) {
    ids = encode(text);
    encodeCache.set(text, ids);
  }
  return ids;
}

/** Number of o200k tokens in `text`. */
export function countTokens(text: string): number {
  return tokenIds(text).length;
}

/** The first `n` tokens of `text`, decoded back to text (for max_tokens truncation). */
export function truncateTokens(text: string, n: number): string {
  const ids = tokenIds(text);
  if (ids.length <= n) return text;
  return decode(ids.slice(0, n) as number[]);
}

/** Per-message overhead in the sim's input-token count (OpenAI cookbook: 3 per message + 3). */
export const TOKENS_PER_MESSAGE = 3;
/** Tokens added once per prompt for the assistant reply priming. */
export const TOKENS_PER_PROMPT = 3;

/** One message of a prompt as the sim sees it: role plus its text (all parts joined). */
export interface PromptMessage {
  role: string;
  text: string;
}

/**
 * The prompt's token stream and input-token count.
 * Count = Σ (tokens(role + "\n" + text) + 3) + 3, the OpenAI cookbook rule for chat messages.
 * `ids` is the concatenated per-message encoding, used for prefix (prompt-cache) hashing.
 * Source: openai-cookbook "How to count tokens with tiktoken" (num_tokens_from_messages).
 */
export function promptTokens(messages: readonly PromptMessage[]): { count: number; ids: readonly number[][] } {
  let count = TOKENS_PER_PROMPT;
  const ids: number[][] = [];
  for (const m of messages) {
    const t = tokenIds(`${m.role}\n${m.text}`);
    count += t.length + TOKENS_PER_MESSAGE;
    ids.push(t as number[]);
  }
  return { count, ids };
}
