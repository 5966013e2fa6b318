import { createHash } from 'node:crypto';
import { z } from 'zod';
import {
  SubmittedExpectation,
  isSubjectToken,
  type Expectation,
  type TrafficClass,
  type Api,
} from '@shadowplane/contracts';
import { detectApi } from '@shadowplane/providers';
import { TRACEPARENT_RE, tracingEnabled } from '@shadowplane/telemetry';
import type { SamplingRuleSpec } from './config-schema.js';

/** The request facts sampling looks at: all known before the body is read. */
export interface RequestHead {
  method: string;
  /** path without query */
  path: string;
  /** Host header without port, lowercased ('' when absent) */
  host: string;
  /** lowercased header name → first value, only for {@link Sampler.headerNames} and `x-shadow-*` */
  headers: ReadonlyMap<string, string>;
}

/** Why a request that would otherwise be captured is not (stable, bounded set; used as a metric label). */
export type SkipReason =
  'opt_out' | 'unknown_api' | 'bad_opt_in' | 'bad_expectation' | 'bad_traffic_class' | 'too_large';

/** What sampling decided for one request, from its head alone. */
export type SampleDecision =
  | { kind: 'not_sampled' }
  | { kind: 'skipped'; reason: SkipReason }
  | {
      kind: 'sampled';
      api: Api;
      suite: string;
      callType: string;
      trafficClass: TrafficClass;
      expectations: Expectation[];
      retentionConsent: boolean;
      /** salted sha256 (hex) of the sticky key, or null when sampled at random */
      stickyKeyHash: string | null;
      /** model filter from the matched rule, applied at capture time (null = any) */
      models: string[] | null;
      /** the matched rule's name, or null */
      rule: string | null;
      /** the request's W3C trace context, when the sampler reads it and the request carries a valid one */
      traceContext?: { traceparent: string; tracestate: string | null };
    };

/** Options for {@link Sampler}; see `SidecarConfig.sampling`. */
export interface SamplerOptions {
  rate: number;
  suite: string;
  stickyHeader: string | null;
  stickySalt: string | null;
  optIn: boolean;
  optInRate: number;
  rules: SamplingRuleSpec[];
  expectations: Expectation[];
  retentionConsent: boolean;
  /** random source in [0, 1); default Math.random (tests inject a fixed one) */
  random?: () => number;
  /**
   * read `traceparent`/`tracestate` into sampled captures (so shadow spans link to the production
   * trace); default: whether tracing is on in this process. Off, the headers are not even looked at.
   */
  traceContext?: boolean;
}

const ExpectHeader = z.union([SubmittedExpectation, z.array(SubmittedExpectation).max(32)]);
const TWO_POW_52 = 2 ** 52;

/** Header names the sampler reads besides the configured ones. */
export const SHADOW_HEADERS = Object.freeze({
  optOut: 'x-shadow-opt-out',
  suite: 'x-shadow-suite',
  callType: 'x-shadow-call-type',
  expect: 'x-shadow-expect',
  trafficClass: 'x-shadow-traffic-class',
  retentionConsent: 'x-shadow-retention-consent',
});

/**
 * Decides from the request head alone whether a request is captured, and as what.
 *
 * Order: opt-out (`x-shadow-opt-out: 1|true` always wins → `skipped:opt_out`); not a POST to a
 * known LLM API path → `not_sampled` (or `skipped:unknown_api` when the caller opted in); opt-in
 * headers `x-shadow-suite` / `x-shadow-call-type` (rate `opt_in_rate`, default 1); else the first
 * matching rule (path prefix, host, headers); else the default rate and suite. The draw is sticky
 * when a sticky header is configured and present: u = first 52 bits of
 * sha256(salt ‖ 0x00 ‖ key) / 2^52, sampled when u < rate — so one key is in or out at a given
 * rate, and a key in at rate r is also in at every rate above r. Without the header the draw is
 * random. Sampled requests then validate `x-shadow-traffic-class` (`production|synthetic|test`)
 * and `x-shadow-expect` (one Expectation or an array, JSON; a `regex` value must compile under RE2:
 * contracts `SubmittedExpectation`) and are skipped with a reason when invalid (the request itself
 * is still forwarded unchanged).
 */
export class Sampler {
  /** lowercased header names the proxy must collect into {@link RequestHead.headers} */
  readonly headerNames: ReadonlySet<string>;
  private readonly traceContext: boolean;
  private readonly random: () => number;
  /**
   * true when nothing can be sampled without an `x-shadow-*` opt-in header (rate 0, every rule
   * rate 0): the hot path skips the decision for requests that carry none
   */
  readonly idle: boolean;

  constructor(private readonly o: SamplerOptions) {
    this.random = o.random ?? Math.random;
    const names = new Set<string>(Object.values(SHADOW_HEADERS));
    if (o.stickyHeader) names.add(o.stickyHeader);
    this.traceContext = o.traceContext ?? tracingEnabled();
    if (this.traceContext) names.add('traceparent').add('tracestate');
    for (const r of o.rules) {
      if (r.sticky_header) names.add(r.sticky_header);
      for (const h of Object.keys(r.headers ?? {})) names.add(h);
    }
    this.headerNames = names;
    this.idle = o.rate === 0 && o.rules.every((r) => r.rate === 0);
  }

  /** Decides for one request head; never throws. */
  decide(h: RequestHead): SampleDecision {
    const optOut = h.headers.get(SHADOW_HEADERS.optOut);
    if (optOut !== undefined && /^(1|true|yes)$/i.test(optOut.trim())) return { kind: 'skipped', reason: 'opt_out' };
    const optSuite = this.o.optIn ? h.headers.get(SHADOW_HEADERS.suite) : undefined;
    const optCallType = this.o.optIn ? h.headers.get(SHADOW_HEADERS.callType) : undefined;
    const optedIn = optSuite !== undefined || optCallType !== undefined;
    const api = h.method === 'POST' ? detectApi(h.path, h.host) : null;
    if (api === null) return optedIn ? { kind: 'skipped', reason: 'unknown_api' } : { kind: 'not_sampled' };

    let rate: number;
    let suite = this.o.suite;
    let callType = api.replace('.', '_');
    let stickyHeader = this.o.stickyHeader;
    let models: string[] | null = null;
    let ruleName: string | null = null;
    let trafficClass: TrafficClass = 'production';
    if (optedIn) {
      if (
        (optSuite !== undefined && !isSubjectToken(optSuite)) ||
        (optCallType !== undefined && !isSubjectToken(optCallType))
      ) {
        return { kind: 'skipped', reason: 'bad_opt_in' };
      }
      rate = this.o.optInRate;
      if (optSuite !== undefined) suite = optSuite;
      if (optCallType !== undefined) callType = optCallType;
    } else {
      const rule = this.match(h);
      if (rule) {
        rate = rule.rate;
        if (rule.suite) suite = rule.suite;
        if (rule.call_type) callType = rule.call_type;
        if (rule.sticky_header !== undefined) stickyHeader = rule.sticky_header;
        if (rule.traffic_class) trafficClass = rule.traffic_class;
        models = rule.models ?? null;
        ruleName = rule.name ?? null;
      } else {
        rate = this.o.rate;
      }
    }
    if (rate <= 0) return { kind: 'not_sampled' };

    let stickyKeyHash: string | null = null;
    let u: number;
    const key = stickyHeader ? h.headers.get(stickyHeader) : undefined;
    if (key !== undefined && this.o.stickySalt !== null) {
      stickyKeyHash = createHash('sha256').update(this.o.stickySalt).update('\0').update(key).digest('hex');
      u = parseInt(stickyKeyHash.slice(0, 13), 16) / TWO_POW_52;
    } else {
      u = this.random();
    }
    if (u >= rate) return { kind: 'not_sampled' };

    const tc = h.headers.get(SHADOW_HEADERS.trafficClass);
    if (tc !== undefined) {
      const v = tc.trim().toLowerCase();
      if (v !== 'production' && v !== 'synthetic' && v !== 'test')
        return { kind: 'skipped', reason: 'bad_traffic_class' };
      trafficClass = v;
    }
    let expectations = this.o.expectations;
    const ex = h.headers.get(SHADOW_HEADERS.expect);
    if (ex !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(ex);
      } catch {
        return { kind: 'skipped', reason: 'bad_expectation' };
      }
      const r = ExpectHeader.safeParse(parsed);
      if (!r.success) return { kind: 'skipped', reason: 'bad_expectation' };
      expectations = [...expectations, ...(Array.isArray(r.data) ? r.data : [r.data])];
    }
    let retentionConsent = this.o.retentionConsent;
    const rc = h.headers.get(SHADOW_HEADERS.retentionConsent);
    if (rc !== undefined) retentionConsent = /^(1|true|yes)$/i.test(rc.trim());

    const d: SampleDecision = {
      kind: 'sampled',
      api,
      suite,
      callType,
      trafficClass,
      expectations,
      retentionConsent,
      stickyKeyHash,
      models,
      rule: ruleName,
    };
    if (this.traceContext) {
      const tp = h.headers.get('traceparent')?.trim().toLowerCase();
      if (tp !== undefined && TRACEPARENT_RE.test(tp))
        d.traceContext = { traceparent: tp, tracestate: h.headers.get('tracestate')?.slice(0, 512) ?? null };
    }
    return d;
  }

  private match(h: RequestHead): SamplingRuleSpec | undefined {
    for (const r of this.o.rules) {
      if (r.path_prefix !== undefined && !h.path.startsWith(r.path_prefix)) continue;
      if (r.host !== undefined && r.host.toLowerCase() !== h.host) continue;
      if (r.headers) {
        let ok = true;
        for (const [name, want] of Object.entries(r.headers)) {
          const got = h.headers.get(name);
          if (got === undefined || (want !== '*' && got !== want)) {
            ok = false;
            break;
          }
        }
        if (!ok) continue;
      }
      return r;
    }
    return undefined;
  }
}

/**
 * True when `model` passes a rule's model filter: exact names, or a prefix when the entry ends in
 * `*`. A null filter passes everything; a null model passes only a null filter.
 */
export function modelMatches(filter: string[] | null, model: string | null): boolean {
  if (filter === null) return true;
  if (model === null) return false;
  return filter.some((f) => (f.endsWith('*') ? model.startsWith(f.slice(0, -1)) : model === f));
}
