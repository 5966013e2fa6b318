import { z } from 'zod';
import { CampaignSpec, CampaignState, DatasetCard, FreezeRequest, Outcome } from '@shadowplane/contracts';
import { FreezeResultView, SuiteStatusView } from '@shadowplane/contracts';
import type { Scope } from './auth.js';
import { BENCH_ROUTES } from './bench-routes.js';
import {
  CampaignList,
  CampaignStatus,
  DryRunResult,
  FlagUpdate,
  FlagView,
  HealthView,
  OutcomeAccepted,
  ReportView,
  EvidenceBundleView,
} from '@shadowplane/contracts';

/** A query or path parameter of a route. */
export interface RouteParam {
  name: string;
  in: 'path' | 'query';
  description: string;
  schema: z.ZodType;
  required?: boolean;
}

/** One route of the control API: the single table routing, auth, 405s and the OpenAPI document are built from. */
export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT';
  /** OpenAPI-style path, e.g. `/v1/campaigns/{id}` */
  path: string;
  operationId: string;
  summary: string;
  /** scope a bearer key needs; null = public (health, metrics, the OpenAPI document) */
  scope: Scope | null;
  params?: RouteParam[];
  /** request body schema (JSON); `io: 'input'` view is published */
  body?: z.ZodType;
  bodyDescription?: string;
  /**
   * success status → description and JSON schema (or a non-JSON media type); `alternatives` are
   * further media types the same status can answer with (e.g. text/html for `format=html`)
   */
  responses: Record<
    number,
    {
      description: string;
      schema?: z.ZodType;
      mediaType?: string;
      alternatives?: Record<string, { description?: string; schema?: z.ZodType }>;
    }
  >;
  /** error statuses this route can answer besides 401/403/500/503 */
  errors: number[];
}

const CampaignId = z
  .string()
  .regex(/^cmp_[0-9a-z]{1,60}$/)
  .describe('campaign id, cmp_ + 16 lowercase hex characters');
const idParam: RouteParam = {
  name: 'id',
  in: 'path',
  description: 'campaign id (cmp_…)',
  schema: CampaignId,
  required: true,
};

const suiteParam: RouteParam = {
  name: 'suite',
  in: 'path',
  description: 'suite name (1–64 of [A-Za-z0-9_-])',
  schema: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  required: true,
};

/** Launch options that ride beside the spec in the body (they are not part of the pinned spec). */
export const LaunchOptionsBody = z.object({
  dry_run: z.boolean().optional().describe('estimate and plan only; nothing is written (also ?dry_run=true)'),
  require_power: z
    .boolean()
    .optional()
    .describe(
      'refuse (422 underpowered) if a call type cannot reach the margin at max_items (also ?require_power=true)',
    ),
});

/** A boolean query flag: `true|1` on, `false|0` off. */
export const QueryBool = z.enum(['true', 'false', '1', '0']);

/** Every route of the control API. */
export const ROUTES: readonly RouteDef[] = [
  {
    method: 'GET',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'Liveness: 200 while the process runs',
    scope: null,
    responses: { 200: { description: 'alive', schema: HealthView } },
    errors: [],
  },
  {
    method: 'GET',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness: 200 when NATS is connected, 503 otherwise',
    scope: null,
    responses: { 200: { description: 'ready', schema: HealthView } },
    errors: [],
  },
  {
    method: 'GET',
    path: '/metrics',
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    scope: null,
    responses: { 200: { description: 'Prometheus text exposition', mediaType: 'text/plain' } },
    errors: [],
  },
  {
    method: 'GET',
    path: '/openapi.json',
    operationId: 'openapi',
    summary: 'This OpenAPI 3.1 document',
    scope: null,
    responses: {
      200: { description: 'OpenAPI document', schema: z.object({ openapi: z.literal('3.1.0') }).passthrough() },
    },
    errors: [],
  },
  {
    method: 'POST',
    path: '/v1/campaigns',
    operationId: 'createCampaign',
    summary: 'Launch a budget-capped shadow campaign, or plan one with dry_run',
    scope: 'campaign:write',
    params: [
      {
        name: 'dry_run',
        in: 'query',
        description: 'true: estimate, power plan and dispositions only; nothing is written',
        schema: QueryBool,
      },
      {
        name: 'require_power',
        in: 'query',
        description: 'true: refuse with 422 when a call type is underpowered',
        schema: QueryBool,
      },
    ],
    body: CampaignSpec,
    bodyDescription: 'CampaignSpec plus optional top-level dry_run and require_power booleans',
    responses: {
      201: { description: 'launched (state running)', schema: CampaignStatus },
      200: { description: 'dry run result; nothing written', schema: DryRunResult },
    },
    errors: [400, 413, 422],
  },
  {
    method: 'GET',
    path: '/v1/campaigns',
    operationId: 'listCampaigns',
    summary: 'List campaigns, newest first',
    scope: 'campaign:read',
    params: [
      {
        name: 'state',
        in: 'query',
        description: 'only campaigns in this state',
        schema: CampaignState,
      },
    ],
    responses: { 200: { description: 'campaigns', schema: CampaignList } },
    errors: [400],
  },
  {
    method: 'GET',
    path: '/v1/campaigns/{id}',
    operationId: 'getCampaign',
    summary:
      'State, items seen/dispatched/target per call type, spend settled/reserved/limit, per-arm counts and errors',
    scope: 'campaign:read',
    params: [idParam],
    responses: { 200: { description: 'campaign status', schema: CampaignStatus } },
    errors: [404],
  },
  {
    method: 'POST',
    path: '/v1/campaigns/{id}/pause',
    operationId: 'pauseCampaign',
    summary: 'Pause a running campaign (no new dispatch)',
    scope: 'campaign:write',
    params: [idParam],
    responses: { 200: { description: 'campaign status after the change', schema: CampaignStatus } },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/v1/campaigns/{id}/resume',
    operationId: 'resumeCampaign',
    summary: 'Resume a paused campaign (503 while paid_dispatch is off)',
    scope: 'campaign:write',
    params: [idParam],
    responses: { 200: { description: 'campaign status after the change', schema: CampaignStatus } },
    errors: [404, 409],
  },
  {
    method: 'POST',
    path: '/v1/campaigns/{id}/stop',
    operationId: 'stopCampaign',
    summary: 'Stop a campaign for good; in-flight calls finish and settle',
    scope: 'campaign:write',
    params: [idParam],
    responses: { 200: { description: 'campaign status after the change', schema: CampaignStatus } },
    errors: [404, 409],
  },
  {
    method: 'GET',
    path: '/v1/campaigns/{id}/report',
    operationId: 'getReport',
    summary: "The verdict service's latest stored report: JSON, HTML, or the evidence bundle",
    scope: 'campaign:read',
    params: [
      idParam,
      {
        name: 'format',
        in: 'query',
        description: 'json (default), html or bundle',
        schema: z.enum(['json', 'html', 'bundle']),
      },
      {
        name: 'provisional',
        in: 'query',
        description: 'true: ask the verdict service to write a provisional report now, then answer with the latest',
        schema: QueryBool,
      },
    ],
    responses: {
      200: {
        description:
          'format=json: the report and its run record (report_id, report, run_record_id, run_record); format=bundle: the evidence bundle (application/json); format=html: the self-contained HTML report (text/html). Headers x-shadow-report-id, x-shadow-run-record-id',
        schema: z.union([ReportView, EvidenceBundleView]),
        alternatives: {
          'text/html': { description: 'format=html: one self-contained page (inline CSS and SVG, no scripts)' },
        },
      },
    },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/campaigns/{id}/observations',
    operationId: 'exportObservations',
    summary: 'Export the campaign OBS stream as NDJSON (observations, item events, outcomes)',
    scope: 'campaign:read',
    params: [
      idParam,
      {
        name: 'outputs',
        in: 'query',
        description:
          'true: fill output_text from the encrypted artifact store (needs the admin scope too and a configured keyring)',
        schema: QueryBool,
      },
    ],
    responses: { 200: { description: 'one ObsMessage JSON per line', mediaType: 'application/x-ndjson' } },
    errors: [400, 404],
  },
  {
    method: 'POST',
    path: '/v1/outcomes',
    operationId: 'addOutcome',
    summary: 'Record a first-party outcome for an envelope or item (published on the OBS stream)',
    scope: 'outcome:write',
    body: Outcome,
    responses: {
      202: { description: 'accepted', schema: OutcomeAccepted },
      200: { description: 'the same outcome was already recorded', schema: OutcomeAccepted },
    },
    errors: [400, 404, 413],
  },
  {
    method: 'GET',
    path: '/v1/datasets/{hash}',
    operationId: 'getDatasetCard',
    summary: 'A dataset card by its hash',
    scope: 'campaign:read',
    params: [
      {
        name: 'hash',
        in: 'path',
        description: 'dataset hash (64 hex)',
        schema: z.string().regex(/^[0-9a-f]{64}$/),
        required: true,
      },
    ],
    responses: { 200: { description: 'dataset card', schema: DatasetCard } },
    errors: [400, 404],
  },
  {
    method: 'GET',
    path: '/v1/suites/{suite}/status',
    operationId: 'getSuiteStatus',
    summary:
      'Readiness of a suite per call type: confirmed captures, a dry freeze (distinct items, clusters, exclusions by reason, power plan) and the latest frozen dataset card',
    scope: 'campaign:read',
    params: [
      suiteParam,
      {
        name: 'max_items',
        in: 'query',
        description: 'cap of the dry freeze (default 500, ≤ 5000)',
        schema: z.string(),
      },
      { name: 'margin_pp', in: 'query', description: 'margin of the power plan, pp (default 2)', schema: z.string() },
      { name: 'alpha', in: 'query', description: 'one-sided α of the power plan (default 0.05)', schema: z.string() },
    ],
    responses: { 200: { description: 'suite status', schema: SuiteStatusView } },
    errors: [400, 404],
  },
  {
    method: 'POST',
    path: '/v1/suites/{suite}/freeze',
    operationId: 'freezeSuite',
    summary:
      'Freeze the suite: one immutable, content-addressed, weighted dataset per call type (references into the capture stream); a re-freeze of the same captures is a no-op',
    scope: 'campaign:write',
    params: [suiteParam],
    body: FreezeRequest,
    bodyDescription:
      'max_items (default 500, ≤ 5000), builder (from_filter; import with the items of a JSONL file; from_failures of an ended run; synthetic: a request template with {{name}} placeholders expanded over rows or the product of value lists, refused when it expands to more than max_items), margin_pp and alpha of the power plan',
    responses: {
      201: { description: 'at least one dataset was written', schema: FreezeResultView },
      200: {
        description: 'every dataset already existed (same hashes): nothing was written',
        schema: FreezeResultView,
      },
    },
    errors: [400, 404, 413],
  },
  {
    method: 'GET',
    path: '/v1/admin/flags/paid_dispatch',
    operationId: 'getPaidDispatch',
    summary: 'Read the paid_dispatch kill switch (unknown = off)',
    scope: 'campaign:read',
    responses: { 200: { description: 'flag', schema: FlagView } },
    errors: [],
  },
  {
    method: 'PUT',
    path: '/v1/admin/flags/paid_dispatch',
    operationId: 'setPaidDispatch',
    summary: 'Flip the paid_dispatch kill switch',
    scope: 'admin',
    body: FlagUpdate,
    responses: { 200: { description: 'flag after the change', schema: FlagView } },
    errors: [400, 413],
  },
  ...BENCH_ROUTES,
];

/** Fastify path syntax (`:id`) of an OpenAPI path (`{id}`). */
export function fastifyPath(p: string): string {
  return p.replace(/\{(\w+)\}/g, ':$1');
}

/** A regex matching concrete URLs of an OpenAPI path, for 405 detection. */
export function pathRegex(p: string): RegExp {
  return new RegExp(`^${p.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`);
}
