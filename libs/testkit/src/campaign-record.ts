import { Campaign, contentHash, type CampaignSpec } from '@shadowplane/contracts';

/**
 * A stored `shadow.campaign/v1` value for a test to put in `shadow_campaigns`: run 1 of
 * comparison key `gsm8k:math:inc:same` (the key of `synthSpec(['same'])`), running, created and
 * updated at 2026-11-01T11:00:00Z.
 * @throws ZodError when `id` or `spec` do not satisfy the contract
 */
export function runningCampaign(id: string, spec: CampaignSpec): Campaign {
  return Campaign.parse({
    schema: 'shadow.campaign/v1',
    id,
    spec,
    spec_hash: contentHash(spec),
    comparison_key: 'gsm8k:math:inc:same',
    run_index: 1,
    state: 'running',
    state_reason: null,
    created_at: '2026-11-01T11:00:00.000Z',
    updated_at: '2026-11-01T11:00:00.000Z',
  });
}
