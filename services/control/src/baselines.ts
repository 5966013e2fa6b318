import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KV } from '@nats-io/kv';
import type { Bus } from '@shadowplane/bus';
import {
  Baseline,
  BaselineRef,
  SubjectToken,
  ShadowplaneError,
  isShadowplaneError,
  type Campaign,
} from '@shadowplane/contracts';
import { PinBaselineBody } from './bench-routes.js';
import { TERMINAL_STATES } from './campaign-ids.js';
import type { CampaignService } from './campaigns.js';
import { invalidRequest, parseOr400 } from './errors.js';
import type { ReportsPort } from './reports-port.js';

/** KV key of a suite's baseline in the reports bucket. */
export const baselineKey = (suite: string): string => `baseline.${suite}`;

/** Dependencies of {@link BaselineService}. */
export interface BaselineDeps {
  bus: Bus;
  /** the reports KV bucket (baselines live beside the report pointers) */
  reportsKv: KV;
  campaigns: CampaignService;
  reports: ReportsPort;
}

/** A baseline run resolved from a reference: the campaign, its reference arm and its final report. */
export interface ResolvedRun {
  campaign: Campaign;
  arm_id: string;
  report_id: string;
  run_record_id: string | null;
}

/**
 * Suite baselines (docs/bench.md): pin a completed run, read it back, and resolve a compare
 * run's `compare.baseline` (a campaign id or `<suite>:main`) into the run it names.
 */
export class BaselineService {
  constructor(private readonly deps: BaselineDeps) {}

  /** The pinned baseline of a suite, or null. */
  async get(suite: string): Promise<Baseline | null> {
    const e = await this.deps.reportsKv.get(baselineKey(suite));
    if (!e || e.operation !== 'PUT' || e.length === 0) return null;
    return Baseline.parse(e.json());
  }

  /**
   * A run usable as a baseline: it exists (else 404 baseline_not_found), belongs to `suite`, is
   * terminal with a final (non-provisional) report, and has the arm (default: its incumbent; for
   * a compare run, its candidate — a compare run never called its incumbent). Else 409
   * baseline_not_completed naming why.
   */
  async run(campaignId: string, suite: string, armId?: string): Promise<ResolvedRun> {
    let c: Campaign;
    try {
      c = await this.deps.campaigns.get(campaignId);
    } catch (e) {
      if (isShadowplaneError(e) && e.code === 'not_found')
        throw new ShadowplaneError('baseline_not_found', `no campaign ${campaignId} to use as a baseline`, {
          details: { campaign_id: campaignId },
        });
      throw e;
    }
    const refuse = (why: string) =>
      new ShadowplaneError('baseline_not_completed', `campaign ${campaignId} cannot be a baseline: ${why}`, {
        details: { campaign_id: campaignId, state: c.state },
      });
    if (c.spec.suite !== suite) throw refuse(`it belongs to suite ${c.spec.suite}, not ${suite}`);
    if (!TERMINAL_STATES.has(c.state)) throw refuse(`it is ${c.state}; pin it once it has ended`);
    // a compare run and a judged_dataset_run never called their incumbent (its observations
    // stand for a baseline run's or for what production served)
    const incumbentNotCalled = c.spec.compare !== undefined || c.spec.instrument === 'judged_dataset_run';
    const arm = armId ?? (incumbentNotCalled ? c.spec.candidates[0]!.id : c.spec.incumbent.id);
    const called = incumbentNotCalled
      ? c.spec.candidates.map((a) => a.id)
      : [c.spec.incumbent.id, ...c.spec.candidates.map((a) => a.id)];
    if (!called.includes(arm)) throw refuse(`it called no arm ${arm} (its arms: ${called.join(', ')})`);
    const latest = await this.deps.reports.readLatestReport(this.deps.bus, campaignId);
    if (!latest || latest.provisional) throw refuse('its final report is not written yet');
    return { campaign: c, arm_id: arm, report_id: latest.reportId, run_record_id: latest.runRecordId };
  }

  /** Pins a run as the suite's baseline (see {@link run} for what is refused). */
  async pin(suite: string, body: PinBaselineBody, by: string): Promise<Baseline> {
    const r = await this.run(body.campaign_id, suite, body.arm_id);
    const b = Baseline.parse({
      schema: 'shadow.baseline/v1',
      suite,
      campaign_id: r.campaign.id,
      arm_id: r.arm_id,
      report_id: r.report_id,
      run_record_id: r.run_record_id,
      source: r.campaign.spec.source,
      call_types: r.campaign.spec.call_types,
      pinned_at: new Date().toISOString(),
      pinned_by: by,
    });
    await this.deps.reportsKv.put(baselineKey(suite), JSON.stringify(b));
    return b;
  }

  /** Resolves `<suite>:main` or a campaign id to a baseline run. */
  async resolve(ref: string, suite: string): Promise<ResolvedRun> {
    if (ref.endsWith(':main')) {
      const s = ref.slice(0, -':main'.length);
      if (s !== suite)
        throw invalidRequest([
          { path: 'compare.baseline', message: `names suite ${s}, but the campaign is on suite ${suite}` },
        ]);
      const b = await this.get(s);
      if (!b)
        throw new ShadowplaneError(
          'baseline_not_found',
          `suite ${s} has no pinned baseline (PUT /v1/suites/${s}/baseline)`,
          {
            details: { suite: s },
          },
        );
      return this.run(b.campaign_id, suite, b.arm_id);
    }
    return this.run(ref, suite);
  }

  /**
   * Prepares a submitted campaign body for compare mode, before schema validation. Without
   * `compare`, returns it unchanged. With it: refuses a submitted `compare.resolved` (400); resolves
   * the baseline; sets `incumbent` to the baseline arm's definition (a submitted incumbent must be
   * that same arm, else 400); fills `source` and `call_types` from the baseline run when omitted;
   * pins `compare.resolved` {campaign_id, arm_id, report_id}.
   * @throws ShadowplaneError invalid_request, baseline_not_found, baseline_not_completed
   */
  async prepare(input: unknown): Promise<unknown> {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return input;
    const body = input as Record<string, unknown>;
    if (body['compare'] === undefined) return input;
    const cmp = body['compare'] as Record<string, unknown> | null;
    if (cmp === null || typeof cmp !== 'object' || Array.isArray(cmp))
      throw invalidRequest([{ path: 'compare', message: 'must be an object {baseline}' }]);
    if (cmp['resolved'] !== undefined)
      throw invalidRequest([{ path: 'compare.resolved', message: 'is set by the control API at launch; omit it' }]);
    const ref = parseOr400(BaselineRef, cmp['baseline'], ['compare', 'baseline']);
    const suite = parseOr400(SubjectToken, body['suite'], ['suite']);
    const r = await this.resolve(ref, suite);
    const s = r.campaign.spec;
    const arm = [s.incumbent, ...s.candidates].find((a) => a.id === r.arm_id)!;
    const given = body['incumbent'] as Record<string, unknown> | undefined;
    if (
      given !== undefined &&
      (given['id'] !== arm.id || given['provider'] !== arm.provider || given['model'] !== arm.model)
    )
      throw invalidRequest([
        {
          path: 'incumbent',
          message: `in compare mode the incumbent is the baseline arm ${arm.id} (${arm.provider}/${arm.model}); omit it`,
        },
      ]);
    return {
      ...body,
      incumbent: arm,
      source: body['source'] ?? s.source,
      call_types: body['call_types'] ?? s.call_types,
      compare: {
        ...cmp,
        baseline: ref,
        resolved: { campaign_id: r.campaign.id, arm_id: r.arm_id, report_id: r.report_id },
      },
    };
  }
}

/** Route handlers of {@link BENCH_ROUTES}, by operationId. */
export function baselineHandlers(
  svc: BaselineService,
): Record<string, (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>> {
  const suiteOf = (req: FastifyRequest) => parseOr400(SubjectToken, (req.params as { suite: string }).suite, ['suite']);
  return {
    getBaseline: async (req) => {
      const suite = suiteOf(req);
      const b = await svc.get(suite);
      if (!b)
        throw new ShadowplaneError('baseline_not_found', `suite ${suite} has no pinned baseline`, {
          details: { suite },
        });
      return b;
    },
    pinBaseline: async (req) => {
      const suite = suiteOf(req);
      const body = parseOr400(PinBaselineBody, req.body);
      const b = await svc.pin(suite, body, req.principal?.id ?? 'unknown');
      req.log.info({ suite, campaignId: b.campaign_id, armId: b.arm_id, keyId: req.principal?.id }, 'baseline pinned');
      return b;
    },
  };
}
