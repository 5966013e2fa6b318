import type { Api } from '@shadowplane/contracts';

// What the request translations share: the JSON object guard, the Untranslatable signal and
// the text-content readers, plus the chat field tables both directions consult.

/** A JSON object as parsed. */
export type Obj = Record<string, unknown>;
/** True for a plain JSON object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Thrown inside translation and turned into `{ok:false, reason}`. */
export class Untranslatable extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}
/** Throws {@link Untranslatable} with `reason`. */
export const fail = (reason: string): never => {
  throw new Untranslatable(reason);
};

/** The two OpenAI-shaped chat APIs. */
export const isChat = (a: Api) => a === 'openai.chat' || a === 'openrouter.chat';

/** Chat fields that identify the caller or route billing; dropped from shadow calls (never sent under our key). */
export const CHAT_DROP = [
  'user',
  'safety_identifier',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'stream_options',
];
/** OpenRouter-only request fields (routing/accounting), dropped when the target is not OpenRouter. */
export const OPENROUTER_ONLY = ['provider', 'models', 'route', 'transforms', 'usage', 'plugins'];

/**
 * The text of a string or of text / input_text parts, joined; null or absent → ''.
 * @throws Untranslatable `untranslatable:content` for any other content
 */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => {
        if (isObj(p) && (p['type'] === 'text' || p['type'] === 'input_text') && typeof p['text'] === 'string')
          return p['text'];
        return fail('untranslatable:content');
      })
      .join('');
  }
  if (content === null || content === undefined) return '';
  return fail('untranslatable:content');
}

/**
 * Text parts as Anthropic text blocks.
 * @throws Untranslatable `untranslatable:content` when not an array of text parts
 */
export function textBlocks(content: unknown): Obj[] {
  if (!Array.isArray(content)) return fail('untranslatable:content');
  return content.map((p) => {
    if (isObj(p) && p['type'] === 'text' && typeof p['text'] === 'string') return { type: 'text', text: p['text'] };
    return fail('untranslatable:content');
  });
}
