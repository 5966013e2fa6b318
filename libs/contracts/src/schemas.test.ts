import { describe, expect, it } from 'vitest';
import {
  CampaignSpec,
  Cost,
  Envelope,
  NULL_USAGE,
  Observation,
  RateCard,
  Usage,
  itemHash,
  MAX_ITEMS_CEILING,
  judgedDatasetRunConflicts,
} from './index.js';

const arm = (id: string, extra: object = {}) => ({ id, provider: 'openai', model: 'gpt-4o-mini', ...extra });
const spec = (extra: object = {}) => ({
  name: 'n',
  suite: 'support',
  call_types: ['summarize'],
  incumbent: arm('inc'),
  candidates: [arm('cand')],
  max_cost_usd: 5,
  ...extra,
});

describe('Usage and Cost', () => {
  it('accepts null token counts and keeps them null (null is not zero)', () => {
    expect(Usage.parse({ ...NULL_USAGE })).toEqual({ ...NULL_USAGE });
    expect(Usage.parse({ ...NULL_USAGE, input_tokens: 5 }).output_tokens).toBeNull();
  });
  it('rejects negative and fractional token counts', () => {
    expect(Usage.safeParse({ ...NULL_USAGE, input_tokens: -1 }).success).toBe(false);
    expect(Usage.safeParse({ ...NULL_USAGE, output_tokens: 1.5 }).success).toBe(false);
  });
  it('NULL_USAGE is frozen', () => expect(Object.isFrozen(NULL_USAGE)).toBe(true));
  it('a cost has a basis label from the closed set, or null with a reason', () => {
    expect(Cost.parse({ usd: 0.1, micro_usd: 100000, basis: 'rate_card' }).basis).toBe('rate_card');
    expect(Cost.parse({ usd: null, micro_usd: null, basis: null, reason: 'no_usage' }).reason).toBe('no_usage');
    expect(Cost.safeParse({ usd: 0.1, micro_usd: 100000, basis: 'measured' }).success).toBe(false);
    expect(Cost.safeParse({ usd: 0.1, micro_usd: 0.5, basis: 'rate_card' }).success).toBe(false);
  });
  it('a rate card is strict and non-negative', () => {
    expect(RateCard.safeParse({ input: 1, output: 2, cached_input: 0.1, cache_write: 1.25 }).success).toBe(true);
    expect(RateCard.safeParse({ input: 1, output: 2, extra: 1 }).success).toBe(false);
    expect(RateCard.safeParse({ input: -1, output: 2 }).success).toBe(false);
  });
});

describe('CampaignSpec', () => {
  it('fills the documented defaults', () => {
    const s = CampaignSpec.parse(spec());
    expect(s.max_items).toBe(500);
    expect(s.sample_rate).toBe(1);
    expect(s.source).toBe('live');
    expect(s.margins).toEqual({ noninferiority_pp: 2, min_savings: 0 });
    expect(s.bootstrap.resamples).toBe(2000);
    expect(s.traffic_classes).toEqual(['production']);
    expect(s.incumbent.max_output_tokens).toBe(1024);
  });
  it('requires max_cost_usd', () => {
    const { max_cost_usd: _omit, ...rest } = spec();
    const r = CampaignSpec.safeParse(rest);
    expect(r.success).toBe(false);
    expect(r.error?.issues.some((i) => i.path.join('.') === 'max_cost_usd')).toBe(true);
  });
  it('caps max_items at the ceiling', () => {
    expect(CampaignSpec.safeParse(spec({ max_items: MAX_ITEMS_CEILING })).success).toBe(true);
    expect(CampaignSpec.safeParse(spec({ max_items: MAX_ITEMS_CEILING + 1 })).success).toBe(false);
  });
  it('rejects duplicate arm ids, naming the duplicate', () => {
    const r = CampaignSpec.safeParse(spec({ candidates: [arm('cand'), arm('cand')] }));
    expect(r.success).toBe(false);
    expect(r.error?.issues.some((i) => i.message.includes('duplicate arm id cand'))).toBe(true);
  });
  it('names providers by allowlist id, never by URL', () => {
    expect(
      CampaignSpec.safeParse(spec({ candidates: [arm('c', { provider: 'https://api.openai.com' })] })).success,
    ).toBe(false);
  });
  it('accepts a frozen dataset source only as frozen:<sha256>', () => {
    expect(CampaignSpec.safeParse(spec({ source: `frozen:${'a'.repeat(64)}` })).success).toBe(true);
    expect(CampaignSpec.safeParse(spec({ source: 'frozen:abc' })).success).toBe(false);
  });
});

describe('Envelope and Observation', () => {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  const envelope = {
    schema: 'shadow.envelope/v1',
    envelope_id: '7d444840-9dc0-41d2-9d5a-1a2b3c4d5e6f',
    captured_at: '2026-01-01T00:00:00.000Z',
    suite: 'support',
    call_type: 'summarize',
    api: 'openai.chat',
    method: 'POST',
    path: '/v1/chat/completions',
    request: { body, body_ref: null, bytes: 64, content_type: 'application/json' },
    item_hash: itemHash('openai.chat', '/v1/chat/completions', body),
    served: null,
    traffic_class: 'production',
    retention: { consent: false },
    expectations: [{ kind: 'numeric', value: 4, hard: true }],
    redactions: [],
    source: { placement: 'egress', sidecar_id: 'sc-1', sticky_key_hash: null },
  };

  it('an envelope round-trips and rejects unknown fields', () => {
    expect(Envelope.parse(envelope)).toEqual(envelope);
    expect(Envelope.safeParse({ ...envelope, authorization: 'Bearer x' }).success).toBe(false);
    expect(Envelope.safeParse({ ...envelope, item_hash: 'ABC' }).success).toBe(false);
    expect(Envelope.safeParse({ ...envelope, api: 'gemini' }).success).toBe(false);
  });

  it('an observation requires usage fields (nullable), a cost basis and an integer charge', () => {
    const obs = {
      schema: 'shadow.observation/v1',
      campaign_id: 'c1',
      item_hash: envelope.item_hash,
      call_type: 'summarize',
      arm_id: 'cand',
      role: 'candidate',
      instrument: 'shadow_dual_run',
      envelope_id: envelope.envelope_id,
      provider: 'openai',
      model: 'gpt-4o-mini',
      started_at: '2026-01-01T00:00:01Z',
      ended_at: '2026-01-01T00:00:02Z',
      start_skew_ms: 3,
      attempts: 1,
      status: 'ok',
      http_status: 200,
      error_class: null,
      latency_ms: 1000,
      ttft_ms: null,
      usage: { ...NULL_USAGE },
      cost: { usd: null, micro_usd: null, basis: null, reason: 'no_usage' },
      charged_micro_usd: 1200,
      upstream: null,
      model_echo: 'gpt-4o-mini-2024-07-18',
      pin_honored: null,
      abandoned: true,
      finish_reason: 'stop',
      artifact_ref: null,
      output_digest: null,
      prompt_simhash: '0123456789abcdef',
      traffic_class: 'production',
      expectations: [],
    };
    const parsed = Observation.safeParse(obs);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(Observation.safeParse({ ...obs, charged_micro_usd: 1.5 }).success).toBe(false);
    expect(Observation.safeParse({ ...obs, error_class: 'teapot' }).success).toBe(false);
    const { usage: _u, ...noUsage } = obs;
    expect(Observation.safeParse(noUsage).success).toBe(false);
  });
});

describe('CampaignSpec guards shared by every path into the contract', () => {
  const base = {
    name: 'n',
    suite: 's',
    call_types: ['a'],
    incumbent: { id: 'inc', provider: 'p', model: 'm' },
    candidates: [{ id: 'cand', provider: 'p', model: 'm2' }],
    max_cost_usd: 1,
  };
  it('refuses a call type listed twice, naming the second', () => {
    const r = CampaignSpec.safeParse({ ...base, call_types: ['a', 'b', 'a'] });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['call_types.2']);
  });
  it('refuses a regex scorer whose pattern does not compile, naming the pattern', () => {
    const r = CampaignSpec.safeParse({ ...base, scorers: [{ kind: 'expectations' }, { kind: 'regex', pattern: '(' }] });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['scorers.1.pattern']);
  });
});

describe('CampaignSpec instrument', () => {
  const frozen = `frozen:${'a'.repeat(64)}`;
  const paths = (x: object) => {
    const r = CampaignSpec.safeParse(spec(x));
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };
  it('absent means shadow_dual_run and is not written into the spec (existing spec hashes stay)', () => {
    expect('instrument' in CampaignSpec.parse(spec())).toBe(false);
    expect(CampaignSpec.parse(spec({ instrument: 'shadow_dual_run' })).instrument).toBe('shadow_dual_run');
  });
  it('replay on a frozen source with aa_share 0 is accepted and pinned', () => {
    expect(CampaignSpec.parse(spec({ instrument: 'replay', source: frozen, aa_share: 0 })).instrument).toBe('replay');
  });
  it('refuses unknown instruments, naming the field', () => {
    expect(paths({ instrument: 'vibes' })).toEqual(['instrument']);
  });
  it('judged_dataset_run on a frozen source with aa_share 0 is accepted and pinned; a candidate request cap applies', () => {
    const p = CampaignSpec.parse(
      spec({ instrument: 'judged_dataset_run', source: frozen, aa_share: 0, max_request_cost_usd: 0.01 }),
    );
    expect(p.instrument).toBe('judged_dataset_run');
    expect(p.max_request_cost_usd).toBe(0.01);
  });
  it('judged_dataset_run refuses what cannot apply without an incumbent call, naming each field', () => {
    // the defaults it cannot keep: a live source and aa_share 0.1
    expect(paths({ instrument: 'judged_dataset_run' })).toEqual(['source', 'aa_share']);
    const r = CampaignSpec.safeParse(
      spec({
        instrument: 'judged_dataset_run',
        source: frozen,
        aa_share: 0.5,
        stopping: 'sequential',
        scorers: [{ kind: 'expectations' }, { kind: 'llm_judge', provider: 'openai', model: 'gpt-4o' }],
        compare: { baseline: 'support:main' },
      }),
    );
    expect(r.success).toBe(false);
    const issues = r.error!.issues.map((i) => [i.path.join('.'), i.message] as const);
    expect(issues.map(([p]) => p)).toEqual(expect.arrayContaining(['aa_share', 'compare', 'scorers.1', 'stopping']));
    expect(Object.fromEntries(issues)['scorers.1']).toMatch(/redacted/);
    expect(Object.fromEntries(issues)['aa_share']).toMatch(/aa_share: 0/);
    // the same rules, as a function the control API can call
    expect(
      judgedDatasetRunConflicts({ source: 'live', aa_share: 0, scorers: [{ kind: 'expectations' }] }).map((x) =>
        x.path.join('.'),
      ),
    ).toEqual(['source']);
    expect(judgedDatasetRunConflicts({ source: frozen, aa_share: 0, scorers: [] })).toEqual([]);
  });
  it('replay refuses every field that needs an arm call, naming each', () => {
    expect(paths({ instrument: 'replay' })).toEqual(['source', 'aa_share']);
    expect(
      paths({
        instrument: 'replay',
        source: frozen,
        aa_share: 0,
        stopping: 'sequential',
        max_request_cost_usd: 0.01,
        scorers: [{ kind: 'expectations' }, { kind: 'llm_judge', provider: 'openai', model: 'gpt-4o' }],
        compare: { baseline: 'support:main' },
      }),
    ).toEqual(expect.arrayContaining(['compare', 'scorers.1', 'stopping', 'max_request_cost_usd']));
  });
  it('replay and judged_dataset_run refuse group_sequential stopping too', () => {
    expect(paths({ instrument: 'replay', source: frozen, aa_share: 0, stopping: 'group_sequential' })).toEqual([
      'stopping',
    ]);
    expect(
      paths({ instrument: 'judged_dataset_run', source: frozen, aa_share: 0, stopping: 'group_sequential' }),
    ).toEqual(['stopping']);
  });
});

describe('CampaignSpec stopping', () => {
  const paths = (x: object) => {
    const r = CampaignSpec.safeParse(spec(x));
    return r.success ? [] : r.error.issues.map((i) => i.path.join('.'));
  };
  it('group_sequential is accepted with or without a batch (the look spacing)', () => {
    expect(CampaignSpec.parse(spec({ stopping: 'group_sequential' })).stopping).toBe('group_sequential');
    expect(paths({ stopping: 'group_sequential', max_items: 500, stopping_batch_items: 50 })).toEqual([]);
  });
  it('refuses a batch without a sequential rule, and a group-sequential plan of more than 200 looks', () => {
    expect(paths({ stopping_batch_items: 50 })).toEqual(['stopping_batch_items']);
    expect(paths({ stopping: 'group_sequential', max_items: 5000, stopping_batch_items: 20 })).toEqual([
      'stopping_batch_items',
    ]);
    // the same batch is fine for the confidence sequence, which has no planned looks
    expect(paths({ stopping: 'sequential', max_items: 5000, stopping_batch_items: 20 })).toEqual([]);
  });
});
