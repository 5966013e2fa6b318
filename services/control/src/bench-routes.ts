import { z } from 'zod';
import { Baseline, SubjectToken } from '@shadowplane/contracts';
import type { RouteDef, RouteParam } from './routes.js';

const suiteParam: RouteParam = {
  name: 'suite',
  in: 'path',
  description: 'capture suite',
  schema: SubjectToken,
  required: true,
};

/** Body of `PUT /v1/suites/{suite}/baseline`. */
export const PinBaselineBody = z
  .object({
    campaign_id: z
      .string()
      .regex(/^cmp_[0-9a-z]{1,60}$/)
      .describe('the completed run to pin: a campaign of this suite whose final report is written'),
    arm_id: SubjectToken.optional().describe(
      "the run's arm that is the reference (default: its incumbent; for a compare run, its candidate)",
    ),
  })
  .strict();
export type PinBaselineBody = z.infer<typeof PinBaselineBody>;

/** The bench routes (baselines); appended to ROUTES, served and documented like every other route. */
export const BENCH_ROUTES: readonly RouteDef[] = [
  {
    method: 'GET',
    path: '/v1/suites/{suite}/baseline',
    operationId: 'getBaseline',
    summary: "The suite's pinned baseline run (what '<suite>:main' resolves to)",
    scope: 'campaign:read',
    params: [suiteParam],
    responses: { 200: { description: 'the pinned baseline', schema: Baseline } },
    errors: [400, 404],
  },
  {
    method: 'PUT',
    path: '/v1/suites/{suite}/baseline',
    operationId: 'pinBaseline',
    summary: "Pin a completed run (with its final report) as the suite's baseline for compare runs",
    scope: 'campaign:write',
    params: [suiteParam],
    body: PinBaselineBody,
    responses: { 200: { description: 'the baseline as pinned', schema: Baseline } },
    errors: [400, 404, 409, 413],
  },
];
