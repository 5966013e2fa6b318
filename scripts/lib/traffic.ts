import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Expectation } from '@shadowplane/contracts';
import { REPO_ROOT } from './processes.js';

/** One request the demo replays through the sidecar. */
export interface ReplayRequest {
  callType: 'gsm8k' | 'chat';
  system: string | null;
  user: string;
  stream: boolean;
  /** first-party assertions sent in `x-shadow-expect` */
  expectations: Expectation[];
  maxTokens: number;
}

/** The instruction every GSM8K request carries, so answers end in the dataset's `#### n` form. */
export const GSM8K_SYSTEM = 'Solve the grade-school math problem step by step. End with a final line "#### <number>".';

/**
 * The demo's traffic, deterministic for a seed-free slice: the first `gsm8k` GSM8K test questions
 * (reference answer attached as a numeric expectation) and the first `chat` chat prompts (MT-Bench
 * first turns, then awesome-chatgpt-prompts rows; no reference answers). Every `dupEvery`-th GSM8K
 * question is sent twice (exact duplicates add weight, not items); every third request streams.
 */
export function demoTraffic(o: { gsm8k: number; chat: number; dupEvery: number }): ReplayRequest[] {
  const out: ReplayRequest[] = [];
  const lines = readFileSync(join(REPO_ROOT, 'examples', 'data', 'gsm8k-test.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean);
  for (let i = 0; i < Math.min(o.gsm8k, lines.length); i++) {
    const row = JSON.parse(lines[i]!) as { question: string; answer: string };
    const final = /####\s*(.+)\s*$/.exec(row.answer)?.[1]?.trim().replace(/,/g, '');
    if (final === undefined) continue;
    const req: ReplayRequest = {
      callType: 'gsm8k',
      system: GSM8K_SYSTEM,
      user: row.question,
      stream: i % 3 === 2,
      expectations: [{ kind: 'numeric', value: final, hard: false }],
      maxTokens: 512,
    };
    out.push(req);
    if (o.dupEvery > 0 && i % o.dupEvery === 0) out.push({ ...req, stream: !req.stream });
  }
  const chat: { system: string | null; user: string }[] = [];
  for (const l of readFileSync(join(REPO_ROOT, 'examples', 'data', 'mt-bench-questions.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)) {
    const q = JSON.parse(l) as { turns: string[] };
    if (q.turns[0]) chat.push({ system: null, user: q.turns[0] });
  }
  const rows = parseCsv(readFileSync(join(REPO_ROOT, 'examples', 'data', 'awesome-chatgpt-prompts.csv'), 'utf8'), {
    columns: true,
    skip_empty_lines: true,
  }) as { act: string; prompt: string }[];
  for (const r of rows) chat.push({ system: `You are acting as: ${r.act}.`, user: r.prompt });
  for (let i = 0; i < Math.min(o.chat, chat.length); i++) {
    const c = chat[i]!;
    out.push({
      callType: 'chat',
      system: c.system,
      user: c.user,
      stream: i % 3 === 1,
      expectations: [],
      maxTokens: 400,
    });
  }
  return out;
}
