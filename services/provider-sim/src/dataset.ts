import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ShadowplaneError } from '@shadowplane/contracts';
import { hashUnit } from './rng.js';
import { Lru } from './tokens.js';

/** Default known-answer dataset: the GSM8K test split shipped in examples/data. */
export const DEFAULT_DATASET_PATH = fileURLToPath(new URL('../../../examples/data/gsm8k-test.jsonl', import.meta.url));

/** One GSM8K item as the sim holds it. */
export interface KnownQuestion {
  /** 0-based line index in the dataset file */
  index: number;
  /** the question, whitespace-normalised */
  question: string;
  /** reasoning lines of the reference answer with `<<calc>>` annotations removed */
  reasoning: string[];
  /** the checkable answer as written after `####` (may contain commas, e.g. `1,600`) */
  final: string;
}

/** Collapses every whitespace run to one space and trims: the matching rule for questions. */
export function normalizeWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

const KEY_CHARS = 24;

/**
 * The loaded known-answer dataset with an index by normalised question text, and the rule that
 * decides which questions each model answers correctly.
 */
export class KnownAnswers {
  readonly items: KnownQuestion[] = [];
  private readonly byQuestion = new Map<string, KnownQuestion>();
  /** first KEY_CHARS normalised chars → items starting with them (for "contains" matching) */
  private readonly byPrefix = new Map<string, KnownQuestion[]>();
  private readonly matchCache = new Lru<string, KnownQuestion | null>(20_000);
  private readonly correctSets = new Map<string, Uint8Array>();

  /**
   * @param lines parsed `{question, answer}` rows (GSM8K jsonl)
   * @param seed the sim seed
   * @param difficultyWeight 0–1, weight of the shared per-question difficulty in the ranking
   */
  constructor(
    lines: readonly { question: string; answer: string }[],
    private readonly seed: number,
    private readonly difficultyWeight: number,
  ) {
    lines.forEach((row, index) => {
      const parts = row.answer.split('####');
      const final = (parts.at(-1) ?? '').trim();
      const body = parts
        .slice(0, -1)
        .join('####')
        .replace(/<<[^>]*>>/g, '');
      const reasoning = body
        .split('\n')
        .map((l) => l.trimEnd())
        .filter((l) => l.length > 0);
      const q: KnownQuestion = { index, question: normalizeWhitespace(row.question), reasoning, final };
      this.items.push(q);
      if (!this.byQuestion.has(q.question)) this.byQuestion.set(q.question, q);
      const key = q.question.slice(0, KEY_CHARS);
      const list = this.byPrefix.get(key);
      if (list) list.push(q);
      else this.byPrefix.set(key, [q]);
    });
  }

  /**
   * Loads a GSM8K-style jsonl file (`{"question", "answer"}` per line, answer ending `#### n`).
   * @throws ShadowplaneError `config_invalid` (details.key `dataset`) when the file cannot be
   *   read or a line is not such a row
   */
  static load(path: string, seed: number, difficultyWeight: number): KnownAnswers {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      throw new ShadowplaneError('config_invalid', `cannot read dataset ${path}`, {
        details: { key: 'dataset' },
        cause: e,
      });
    }
    const rows: { question: string; answer: string }[] = [];
    text.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      let row: unknown;
      try {
        row = JSON.parse(line);
      } catch (e) {
        throw new ShadowplaneError('config_invalid', `dataset line ${i + 1} is not JSON`, {
          details: { key: 'dataset', line: i + 1 },
          cause: e,
        });
      }
      const r = row as { question?: unknown; answer?: unknown };
      if (typeof r.question !== 'string' || typeof r.answer !== 'string' || !r.answer.includes('####')) {
        throw new ShadowplaneError(
          'config_invalid',
          `dataset line ${i + 1} needs string question and answer with ####`,
          { details: { key: 'dataset', line: i + 1 } },
        );
      }
      rows.push({ question: r.question, answer: r.answer });
    });
    return new KnownAnswers(rows, seed, difficultyWeight);
  }

  /**
   * Finds the known question contained in `message` (exact text after whitespace normalisation;
   * the message may add text around it). Cached per message.
   */
  match(message: string): KnownQuestion | null {
    const hit = this.matchCache.get(message);
    if (hit !== undefined) return hit;
    const found = this.find(normalizeWhitespace(message));
    this.matchCache.set(message, found);
    return found;
  }

  private find(msg: string): KnownQuestion | null {
    const exact = this.byQuestion.get(msg);
    if (exact) return exact;
    // A question starts at the message start or right after a space (normalised text).
    let best: KnownQuestion | null = null;
    for (let i = 0; i + KEY_CHARS <= msg.length; i++) {
      if (i > 0 && msg.charCodeAt(i - 1) !== 32) continue;
      const list = this.byPrefix.get(msg.slice(i, i + KEY_CHARS));
      if (!list) continue;
      for (const q of list) {
        if (msg.startsWith(q.question, i) && (best === null || q.question.length > best.question.length)) best = q;
      }
    }
    return best;
  }

  /**
   * Whether `model` answers item `q` correctly. Each question gets a shared difficulty d_q and a
   * per-model draw n_qm (seeded hashes); score = w·d_q + (1−w)·n_qm, and the model answers the
   * round(accuracy·N) lowest-scoring questions correctly. So accuracy over the whole dataset is
   * exact, any subset's accuracy varies only by sampling, and the tiers' mistakes are correlated
   * through d_q. Deterministic per (model, question, seed, accuracy).
   */
  isCorrect(model: string, accuracy: number, q: KnownQuestion): boolean {
    const key = `${model}\u0000${accuracy}`;
    let set = this.correctSets.get(key);
    if (!set) {
      const w = this.difficultyWeight;
      const scored = this.items.map((it) => ({
        i: it.index,
        s:
          w * hashUnit(this.seed, 'difficulty', it.question) +
          (1 - w) * hashUnit(this.seed, 'skill', model, it.question),
      }));
      scored.sort((a, b) => a.s - b.s || a.i - b.i);
      set = new Uint8Array(this.items.length);
      const nCorrect = Math.round(accuracy * this.items.length);
      for (let k = 0; k < nCorrect; k++) set[scored[k]!.i] = 1;
      this.correctSets.set(key, set);
    }
    return set[q.index] === 1;
  }

  /**
   * The answer text `model` gives to `q`: the reference reasoning then `#### <final>` when
   * correct (by default {@link isCorrect}; a noisy call passes its own draw); otherwise the same reasoning whose last line and final answer carry a plausible
   * wrong number (off by a seeded amount, same formatting).
   */
  answer(
    model: string,
    accuracy: number,
    q: KnownQuestion,
    correct: boolean = this.isCorrect(model, accuracy, q),
  ): { text: string; correct: boolean; final: string } {
    if (correct) {
      return { text: [...q.reasoning, `#### ${q.final}`].join('\n'), correct: true, final: q.final };
    }
    const wrong = wrongAnswer(
      q.final,
      hashUnit(this.seed, 'wrong', model, q.question),
      hashUnit(this.seed, 'wrong-kind', model, q.question),
    );
    const lines = [...q.reasoning];
    const last = lines.length - 1;
    if (last >= 0) {
      const l = lines[last]!;
      const at = l.lastIndexOf(q.final);
      if (at >= 0) lines[last] = l.slice(0, at) + wrong + l.slice(at + q.final.length);
    }
    return { text: [...lines, `#### ${wrong}`].join('\n'), correct: false, final: wrong };
  }
}

/**
 * A plausible wrong number for `final` (e.g. `18` → `21`, `1,600` → `1,440`), never equal to it.
 * @param u1 uniform draw for the size of the error; @param u2 uniform draw for its kind
 */
export function wrongAnswer(final: string, u1: number, u2: number): string {
  const n = Number(final.replace(/,/g, ''));
  if (!Number.isFinite(n)) return `${final}1`;
  const decimals = (final.split('.')[1] ?? '').length;
  let w: number;
  if (u2 < 0.25 && n !== 0) w = n * 2;
  else if (u2 < 0.4 && Math.abs(n) >= 4) w = Math.round(n / 2);
  else {
    const mag = Math.max(1, Math.round(Math.abs(n) * (0.05 + 0.25 * u1)));
    const sign = u2 < 0.7 && n - mag >= 0 ? -1 : 1;
    w = n + sign * mag;
  }
  if (w === n) w = n + 1;
  const fixed = decimals > 0 ? w.toFixed(decimals) : String(Math.round(w));
  if (!final.includes(',')) return fixed;
  const [int, frac] = fixed.split('.');
  const withCommas = (int ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? withCommas : `${withCommas}.${frac}`;
}
