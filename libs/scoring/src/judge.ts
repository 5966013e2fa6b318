import { request } from 'undici';
import { ShadowplaneError } from '@shadowplane/contracts';
import type { ScoreResult } from './scorers.js';

/** Options for {@link judgeOutput}. */
export interface JudgeOptions {
  /** provider base URL from the allowlist, e.g. `http://127.0.0.1:4010` (the OpenAI chat path `/v1/chat/completions` is appended) */
  baseUrl: string;
  /** API key (sent as a Bearer token; never logged), or null */
  apiKey: string | null;
  model: string;
  /** the request's prompt text */
  prompt: string;
  /** the answer to grade */
  output: string;
  /** optional reference answer (e.g. the incumbent's output or a gold answer) */
  reference?: string;
  /** request timeout in ms (default 30,000) */
  timeoutMs?: number;
}

/** The judge's fixed instructions: answer with a JSON object holding a score in [0, 1]. */
export const JUDGE_SYSTEM_PROMPT =
  'You grade answers. Reply with only a JSON object {"score": <number from 0 to 1>, "reason": "<one sentence>"}. ' +
  '1 means fully correct and helpful, 0 means wrong or unhelpful.';

/**
 * Asks an LLM judge (OpenAI chat-completions shape, over undici) to grade one output.
 * Returns a ScoreResult with source `judge` and scorer `judge:<model>`; score null (with the
 * reason in `detail`) when the reply carries no parsable score in [0, 1].
 * Errors: ShadowplaneError `upstream_unavailable` on a non-2xx answer or a network error,
 * `upstream_timeout` past `timeoutMs`.
 */
export async function judgeOutput(o: JudgeOptions): Promise<ScoreResult> {
  const scorer = `judge:${o.model}`;
  const user = `Question:\n${o.prompt}\n\n${o.reference !== undefined ? `Reference answer:\n${o.reference}\n\n` : ''}Answer to grade:\n${o.output}`;
  const body = {
    model: o.model,
    temperature: 0,
    max_tokens: 200,
    messages: [
      { role: 'system', content: JUDGE_SYSTEM_PROMPT },
      { role: 'user', content: user },
    ],
  };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;
  let res;
  try {
    res = await request(`${o.baseUrl.replace(/\/$/, '')}/v1/chat/completions`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      headersTimeout: o.timeoutMs ?? 30_000,
      bodyTimeout: o.timeoutMs ?? 30_000,
    });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
      throw new ShadowplaneError('upstream_timeout', 'judge did not answer in time', { cause: e });
    throw new ShadowplaneError('upstream_unavailable', `judge unreachable: ${(e as Error).message}`, { cause: e });
  }
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300)
    throw new ShadowplaneError('upstream_unavailable', `judge answered ${res.statusCode}`, {
      details: { status: res.statusCode },
    });
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    return { score: null, scorer, detail: 'judge reply is not JSON', source: 'judge' };
  }
  if (typeof content !== 'string')
    return { score: null, scorer, detail: 'judge reply has no message content', source: 'judge' };
  return parseJudgeVerdict(content, scorer);
}

/** Extracts `{"score": x}` (x in [0, 1]) from a judge's message content; score null otherwise. */
export function parseJudgeVerdict(content: string, scorer = 'judge'): ScoreResult {
  const m = /\{[\s\S]*\}/.exec(content);
  if (m) {
    try {
      const v = JSON.parse(m[0]) as { score?: unknown; reason?: unknown };
      if (typeof v.score === 'number' && v.score >= 0 && v.score <= 1) {
        return {
          score: v.score,
          scorer,
          detail: typeof v.reason === 'string' ? v.reason.slice(0, 200) : 'judged',
          source: 'judge',
        };
      }
    } catch {
      // fall through to null
    }
  }
  return { score: null, scorer, detail: 'no score in [0,1] in the judge reply', source: 'judge' };
}

/**
 * Whether a judge may grade a pair of arms: refused when the judge's provider family equals the
 * family of either arm (a model grading its own family's output is biased toward it). Families come
 * from the allowlist (`ProviderEntry.family`, falling back to the provider id). Returns
 * `{ allowed, reason }`.
 */
export function judgeAllowedForPair(
  judgeFamily: string,
  armFamilies: readonly string[],
): { allowed: boolean; reason: string | null } {
  const same = armFamilies.find((f) => f === judgeFamily);
  return same === undefined
    ? { allowed: true, reason: null }
    : { allowed: false, reason: `judge family ${judgeFamily} equals an arm's family` };
}
