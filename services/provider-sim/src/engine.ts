import type { Api } from '@shadowplane/contracts';
import type { FaultKind, SimConfig, SimModel } from './config.js';
import { FAULT_KINDS } from './config.js';
import type { KnownAnswers } from './dataset.js';
import { PromptCache, SlidingWindowLimiter } from './limits.js';
import type { SimRequest, SimTool } from './prompt.js';
import { hashAlnum, hashHex, hashNormal, hashUnit } from './rng.js';
import { fillerPieces, wordPieces } from './text.js';
import { simJudgeReply } from './judge.js';
import { countTokens, Lru, promptTokens, truncateTokens } from './tokens.js';
import type { Completion } from './wire.js';

/** Per-model mutable state: limiter, prompt cache, fault draw counter. */
interface ModelState {
  name: string;
  cfg: SimModel;
  limiter: SlidingWindowLimiter;
  cache: PromptCache;
  faultDraws: number;
}

/** A planned response: the completion plus its timing, before faults are applied. */
export interface Plan {
  completion: Completion;
  /** time to first byte, ms (already scaled) */
  ttftMs: number;
  /** time from first to last content byte, ms (already scaled) */
  generationMs: number;
  /** tokens counted against TPM (input + output) */
  tpmTokens: number;
  /** whether a GSM8K question was recognised, and if so whether the answer is correct */
  known: { index: number; correct: boolean } | null;
}

const ID_PREFIX: Record<Api, string> = {
  'openai.chat': 'chatcmpl-',
  'openai.responses': 'resp_',
  'anthropic.messages': 'msg_01',
  'openrouter.chat': 'gen-',
};

/**
 * The sim's deterministic core: resolves models, counts tokens, applies prompt caching and rate
 * limits, picks answers and builds {@link Completion}s. Every random choice is a hash of
 * (seed, what, model, request hash, occurrence), so the same request sequence under the same
 * seed produces the same bytes.
 */
export class SimEngine {
  private readonly models = new Map<string, ModelState>();
  private readonly names = new Map<string, string>();
  private occurrences = new Lru<string, number>(100_000);
  /** filler pieces by model + request hash (pure, so safe to cache) */
  private readonly fillers = new Lru<string, string[]>(5_000);
  /** rendered known answers by model + question + output cap (pure, so safe to cache) */
  private readonly answers = new Lru<
    string,
    { text: string; output: number; finish: Completion['finish']; pieces: string[]; correct: boolean }
  >(20_000);

  constructor(
    readonly config: SimConfig,
    private readonly known: KnownAnswers | null,
  ) {
    this.initState();
  }

  private initState(): void {
    this.models.clear();
    this.names.clear();
    for (const [name, cfg] of Object.entries(this.config.models)) {
      this.models.set(name, {
        name,
        cfg,
        limiter: new SlidingWindowLimiter(cfg.rate_limits.rpm, cfg.rate_limits.tpm, this.config.rate_limit_window_ms),
        cache: new PromptCache(cfg.prompt_cache.min_tokens, cfg.prompt_cache.block_tokens, cfg.prompt_cache.ttl_ms),
        faultDraws: 0,
      });
      this.names.set(name, name);
      for (const a of cfg.aliases) this.names.set(a, name);
    }
  }

  /** Forgets limiter windows, prompt caches, fault draw counters and request occurrences. */
  reset(): void {
    this.initState();
    this.occurrences = new Lru<string, number>(100_000);
  }

  /** The canonical model name for `name` (a configured name or alias), or null. */
  resolve(name: string): string | null {
    return this.names.get(name) ?? null;
  }

  /** The model's config; `name` must be canonical. */
  model(name: string): SimModel {
    return this.state(name).cfg;
  }

  /** Configured model names (canonical), in config order. */
  modelNames(): string[] {
    return [...this.models.keys()];
  }

  private state(name: string): ModelState {
    const s = this.models.get(name);
    if (!s) throw new Error(`unknown model ${name}`);
    return s;
  }

  /** Counts one more occurrence of `requestHash` and returns its 0-based index. */
  occurrence(requestHash: string): number {
    const n = this.occurrences.get(requestHash) ?? 0;
    this.occurrences.set(requestHash, n + 1);
    return n;
  }

  /**
   * The fault drawn by rate for the next request to `model` (seeded; one draw per request); a
   * judge model's first `hang_first` requests hang.
   * @returns a fault kind or null
   */
  drawFault(model: string): FaultKind | null {
    const s = this.state(model);
    const k = s.faultDraws++;
    if (k < (s.cfg.judge?.hang_first ?? 0)) return 'hang'; // judge.ts: the first n calls hang
    const rates = s.cfg.faults;
    let total = 0;
    for (const f of FAULT_KINDS) total += rates[f];
    if (total === 0) return null;
    const u = hashUnit(this.config.seed, 'fault', model, k);
    let acc = 0;
    for (const f of FAULT_KINDS) {
      acc += rates[f];
      if (u < acc) return f;
    }
    return null;
  }

  /** Input tokens of a request (cookbook rule, see tokens.ts). */
  inputTokens(req: SimRequest): number {
    return promptTokens(req.messages).count;
  }

  /** The rate limiter of `model`. */
  limiter(model: string): SlidingWindowLimiter {
    return this.state(model).limiter;
  }

  /**
   * Builds the response for a request.
   * @param model canonical model name
   * @param req the parsed request
   * @param requestHash item hash of the request body; @param occ its occurrence index
   * @param nowMs wall clock, used only for prompt-cache TTLs
   */
  plan(model: string, req: SimRequest, requestHash: string, occ: number, nowMs: number): Plan {
    const s = this.state(model);
    const cfg = s.cfg;
    const seed = this.config.seed;
    const api = req.api;
    const { count: input, ids } = promptTokens(req.messages);

    // prompt caching
    let cacheRead = 0;
    let cacheWrite = 0;
    if (cfg.prompt_cache.enabled) {
      const r = s.cache.touch(ids, nowMs);
      cacheRead = Math.min(r.read, input);
      if (api === 'anthropic.messages') cacheWrite = Math.min(Math.max(0, r.cacheable - r.read), input - cacheRead);
    }

    // answer
    const cap = Math.min(req.maxTokens ?? cfg.max_output_tokens, cfg.max_output_tokens);
    let pieces: string[];
    let text: string;
    let output: number;
    let finish: Completion['finish'] = 'stop';
    let known: Plan['known'] = null;
    let toolCall: Completion['toolCall'] = null;
    const q = this.known && req.lastUser ? this.known.match(req.lastUser) : null;
    const wantsTool = req.tools.length > 0 && /\buse the tool\b/i.test(req.lastUser);
    const judged = cfg.judge
      ? simJudgeReply(req.lastUser, {
          cfg: cfg.judge,
          model,
          modelAccuracy: cfg.accuracy,
          known: this.known,
          seed,
          requestHash,
        })
      : null;
    if (judged !== null) {
      text = judged;
      output = countTokens(judged);
      pieces = wordPieces(judged);
    } else if (wantsTool) {
      const tool = req.tools.find((t) => req.lastUser.includes(t.name)) ?? req.tools[0]!;
      const args = JSON.stringify(toolArguments(tool));
      const prefix = api === 'anthropic.messages' ? 'toolu_01' : 'call_';
      toolCall = { id: prefix + hashAlnum(24, seed, 'tool', requestHash, occ), name: tool.name, arguments: args };
      text = '';
      pieces = [];
      output = countTokens(tool.name) + countTokens(args) + 3;
      finish = 'tool_calls';
    } else if (q && this.known) {
      // per-call noise: with probability answer_noise this call's correctness is drawn afresh
      // (correct with probability `accuracy`), so re-invocations of one item can disagree
      let correct = this.known.isCorrect(model, cfg.accuracy, q);
      if (cfg.answer_noise > 0 && hashUnit(seed, 'answer-noise', model, requestHash, occ) < cfg.answer_noise)
        correct = hashUnit(seed, 'answer-redraw', model, requestHash, occ) < cfg.accuracy;
      const ak = `${model}\u0000${q.index}\u0000${cap}\u0000${correct ? 1 : 0}`;
      let a = this.answers.get(ak);
      if (a === undefined) {
        const ans = this.known.answer(model, cfg.accuracy, q, correct);
        // Tier answer style: a model explains before it works the problem, at a length of its own
        // (the model's output_length distribution, a quarter of its median, lognormal per model ×
        // question), so tiers differ in output tokens item by item as real ones do; the reasoning
        // and the `#### <final>` line the scorer reads are unchanged.
        const ol = cfg.output_length;
        const styleTokens = Math.round(
          Math.max(0, (ol.median / 4) * Math.exp(ol.sigma * hashNormal(seed, 'style', model, q.index))),
        );
        const preface =
          styleTokens > 0
            ? `${fillerPieces(styleTokens, Math.floor(hashUnit(seed, 'style-words', model, q.index) * 2 ** 32)).join('')}\n`
            : '';
        let t = preface + ans.text;
        let n = countTokens(t);
        let f: Completion['finish'] = 'stop';
        if (n > cap) {
          t = truncateTokens(t, cap);
          n = cap;
          f = 'length';
        }
        a = { text: t, output: n, finish: f, pieces: wordPieces(t), correct: ans.correct };
        this.answers.set(ak, a);
      }
      known = { index: q.index, correct: a.correct };
      text = a.text;
      output = a.output;
      finish = a.finish;
      pieces = a.pieces;
    } else {
      const ol = cfg.output_length;
      const z = hashNormal(seed, 'length', model, requestHash);
      const natural = Math.min(ol.max, Math.max(ol.min, Math.round(ol.median * Math.exp(ol.sigma * z))));
      const fk = `${model}\u0000${requestHash}`;
      let all = this.fillers.get(fk);
      if (all === undefined || all.length !== natural) {
        all = fillerPieces(natural, Math.floor(hashUnit(seed, 'filler', model, requestHash) * 2 ** 32));
        this.fillers.set(fk, all);
      }
      if (natural > cap) {
        pieces = all.slice(0, cap);
        finish = 'length';
      } else pieces = all;
      text = pieces.join('');
      output = pieces.length;
    }

    // timing
    const scale = this.config.latency_scale;
    const lat = cfg.latency;
    const ttftMs =
      lat.ttft_ms.median === 0 || scale === 0
        ? 0
        : lat.ttft_ms.median * Math.exp(lat.ttft_ms.sigma * hashNormal(seed, 'ttft', model, requestHash, occ)) * scale;
    const generationMs =
      lat.output_tokens_per_s === 0 || scale === 0
        ? 0
        : (output / lat.output_tokens_per_s) *
          1000 *
          (1 + lat.jitter * (2 * hashUnit(seed, 'jitter', model, requestHash, occ) - 1)) *
          scale;

    // usage reporting
    const usageReported = cfg.usage_mode !== 'never';
    const streamUsage = cfg.usage_mode === 'always' || api !== 'openai.chat' || req.includeUsage;
    const usage = { input, cacheRead, cacheWrite, output };

    // OpenRouter provider and cost
    let provider: string | null = null;
    let cost: Completion['cost'] = null;
    if (api === 'openrouter.chat') {
      const served = cfg.openrouter.providers;
      provider = served[0]!;
      if (req.pin && cfg.openrouter.honor_pin) provider = req.pin.order.find((p) => served.includes(p)) ?? served[0]!;
      if (cfg.openrouter.cost) cost = rateCardCost(cfg, usage);
    }

    const created = this.config.epoch_s + Math.floor(hashUnit(seed, 'created', requestHash, occ) * 86_400 * 30);
    const id =
      api === 'openrouter.chat'
        ? `gen-${created}-${hashAlnum(20, seed, api, requestHash, occ)}`
        : api === 'openai.responses'
          ? `resp_${hashHex(48, seed, api, requestHash, occ)}`
          : ID_PREFIX[api] + hashAlnum(api === 'anthropic.messages' ? 22 : 29, seed, api, requestHash, occ);
    const completion: Completion = {
      api,
      model,
      id,
      itemId: api === 'openai.responses' ? `msg_${hashHex(48, seed, 'item', requestHash, occ)}` : '',
      created,
      durationS: Math.max(1, Math.round((ttftMs + generationMs) / 1000)),
      pieces,
      text,
      toolCall,
      finish,
      usage,
      usageReported,
      streamUsage,
      cost,
      provider,
      maxTokens: req.maxTokens,
      instructions: req.messages[0]?.role === 'system' && api === 'openai.responses' ? req.messages[0].text : null,
    };
    return { completion, ttftMs, generationMs, tpmTokens: input + output, known };
  }

  /** Whether an OpenRouter pin can be served: false when fallbacks are off and no pinned provider serves the model. */
  pinServable(model: string, req: SimRequest): boolean {
    if (!req.pin || req.pin.allowFallbacks) return true;
    const cfg = this.state(model).cfg;
    if (!cfg.openrouter.honor_pin) return true;
    return req.pin.order.some((p) => cfg.openrouter.providers.includes(p));
  }
}

/**
 * Rate-card cost of a usage at the model's prices (USD per million tokens): uncached input ×
 * input + cache reads × cached_input + cache writes × cache_write (default 1.25 × input) +
 * output × output; each token priced once. Rounded to 1e-12 USD. Source: docs/architecture.md "Contracts" (usage).
 */
export function rateCardCost(
  cfg: SimModel,
  u: { input: number; cacheRead: number; cacheWrite: number; output: number },
): { total: number; prompt: number; completion: number } {
  const p = cfg.prices;
  const write = p.cache_write ?? p.input * 1.25;
  const r = (x: number) => Math.round(x * 1e12) / 1e12;
  const prompt =
    ((u.input - u.cacheRead - u.cacheWrite) * p.input + u.cacheRead * p.cached_input + u.cacheWrite * write) / 1e6;
  const completion = (u.output * p.output) / 1e6;
  return { total: r(prompt + completion), prompt: r(prompt), completion: r(completion) };
}

/** Placeholder arguments satisfying a tool's JSON Schema `properties` (strings "sim", numbers 1, …). */
function toolArguments(tool: SimTool): Record<string, unknown> {
  const schema = tool.schema as { properties?: Record<string, { type?: unknown; enum?: unknown[] }> } | null;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema?.properties ?? {})) {
    if (Array.isArray(v.enum) && v.enum.length > 0) out[k] = v.enum[0];
    else if (v.type === 'number' || v.type === 'integer') out[k] = 1;
    else if (v.type === 'boolean') out[k] = true;
    else if (v.type === 'array') out[k] = [];
    else if (v.type === 'object') out[k] = {};
    else out[k] = 'sim';
  }
  return out;
}
