/**
 * The campaign routes' handlers: launch (or dry-run) a campaign, list and read campaigns, and the
 * pause / resume / stop transitions, each counted on the control metrics.
 */
import type { FastifyRequest } from 'fastify';
import { isShadowplaneError } from '@shadowplane/contracts';
import type { BaselineService } from './baselines.js';
import type { CampaignService, LaunchOptions } from './campaigns.js';
import { parseOr400 } from './errors.js';
import { queryFlag, type Handlers } from './handler-kit.js';
import type { ControlMetrics } from './metrics.js';
import { LaunchOptionsBody } from './routes.js';
import type { SuiteService } from './suites.js';
import { CampaignSummary } from '@shadowplane/contracts';

/** What the campaign handlers act on. */
export interface CampaignHandlerDeps {
  svc: CampaignService;
  baselines: BaselineService;
  suites: SuiteService;
  metrics: ControlMetrics;
}

/**
 * Handlers of createCampaign, listCampaigns, getCampaign and pause/resume/stopCampaign.
 * Launch options come from the query (`dry_run`, `require_power`) or the body's fields of those names.
 */
export function campaignHandlers({ svc, baselines, suites, metrics }: CampaignHandlerDeps): Handlers {
  async function transition(req: FastifyRequest, action: 'pause' | 'resume' | 'stop') {
    const id = (req.params as { id: string }).id;
    let c;
    try {
      const before = (await svc.get(id)).state;
      c = await svc.transition(id, action, req.principal?.id ?? 'unknown');
      metrics.transitions.inc({ action, outcome: c.state === before ? 'unchanged' : 'changed' });
    } catch (e) {
      metrics.transitions.inc({
        action,
        outcome: isShadowplaneError(e) ? (e.code === 'conflict' ? 'conflict' : 'refused') : 'error',
      });
      throw e;
    }
    // the state this change produced (or found), not a later concurrent change's
    return svc.status(id, c);
  }

  return {
    createCampaign: async (req, reply) => {
      const body = req.body;
      let specInput: unknown = body;
      const opts: LaunchOptions = { dryRun: queryFlag(req, 'dry_run'), requirePower: queryFlag(req, 'require_power') };
      if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
        const { dry_run, require_power, ...rest } = body as Record<string, unknown>;
        const o = parseOr400(LaunchOptionsBody, { dry_run, require_power });
        opts.dryRun ||= o.dry_run === true;
        opts.requirePower ||= o.require_power === true;
        specInput = rest;
      }
      // compare mode: resolve and pin the baseline run before the spec is validated
      specInput = await baselines.prepare(specInput);
      let spec;
      try {
        spec = svc.validateSpec(specInput);
      } catch (e) {
        metrics.launches.inc({
          outcome: isShadowplaneError(e) && e.code === 'unknown_provider' ? 'unknown_provider' : 'invalid',
        });
        throw e;
      }
      try {
        await suites.checkSource(spec);
      } catch (e) {
        metrics.launches.inc({ outcome: 'invalid' });
        throw e;
      }
      if (opts.dryRun) {
        const plan = await svc.plan(spec, opts);
        metrics.launches.inc({ outcome: 'dry_run' });
        return reply.status(200).send(plan);
      }
      try {
        const c = await svc.launch(spec, opts);
        metrics.launches.inc({ outcome: 'launched' });
        req.log.info({ campaignId: c.id, runIndex: c.run_index, keyId: req.principal?.id }, 'campaign launched');
        return reply
          .status(201)
          .header('location', `/v1/campaigns/${c.id}`)
          .send(await svc.status(c.id));
      } catch (e) {
        const code = isShadowplaneError(e) ? e.code : 'error';
        metrics.launches.inc({
          outcome: code === 'underpowered' || code === 'paid_dispatch_disabled' ? code : 'error',
        });
        throw e;
      }
    },
    listCampaigns: async (req) => {
      const q = req.query as Record<string, unknown>;
      const state =
        q['state'] === undefined ? undefined : parseOr400(CampaignSummary.shape.state, q['state'], ['state']);
      const all = (await svc.list()).filter((c) => state === undefined || c.state === state);
      const campaigns = await Promise.all(
        all.map(async (c) => ({
          id: c.id,
          name: c.spec.name,
          suite: c.spec.suite,
          call_types: c.spec.call_types,
          state: c.state,
          state_reason: c.state_reason,
          run_index: c.run_index,
          created_at: c.created_at,
          updated_at: c.updated_at,
          spend: await svc.spend(c.id),
        })),
      );
      return { campaigns };
    },
    getCampaign: async (req) => svc.status((req.params as { id: string }).id),
    pauseCampaign: async (req) => transition(req, 'pause'),
    resumeCampaign: async (req) => transition(req, 'resume'),
    stopCampaign: async (req) => transition(req, 'stop'),
  };
}
