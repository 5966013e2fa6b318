/**
 * The verdict service's in-memory state per campaign, rebuilt from the OBS stream alone: the
 * de-duplicated messages, the campaign value from `shadow_campaigns`, and the bookkeeping of
 * reports written and sequential looks taken.
 */
import { TERMINAL_CAMPAIGN_STATES, type Campaign as CampaignT, type ObsMessage } from '@shadowplane/contracts';
import { obsInterner, observationId, type ObsInterner } from '@shadowplane/evidence';

/** The terminal campaign states (completed, stopped, budget_exhausted, decided). */
export const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_CAMPAIGN_STATES);

/** One campaign's state in this process. */
export interface CampaignSlot {
  messages: Map<string, ObsMessage>;
  /** shares repeated ids, names and timestamps among the campaign's messages (held until it is dropped) */
  intern: ObsInterner;
  campaign: CampaignT | null;
  dirty: boolean;
  /** message count when the final report was last written */
  finalAt: number;
  finalId: string | null;
  /** run record of the final report last written */
  finalRunId: string | null;
  latestId: string | null;
  emptyAt: number;
  /** items with an observation, and their count at the last sequential look */
  items: Set<string>;
  lookAt: number;
}

/** A fresh slot: no messages, no campaign value yet, dirty (progress not written). */
export function newSlot(): CampaignSlot {
  return {
    messages: new Map(),
    intern: obsInterner(),
    campaign: null,
    dirty: true,
    finalAt: -1,
    finalId: null,
    finalRunId: null,
    latestId: null,
    emptyAt: -1,
    items: new Set(),
    lookAt: 0,
  };
}

/**
 * The identity of an OBS message for de-duplication: a redelivered or re-published message has
 * the same key, so replaying the stream twice folds the same evidence.
 */
export function messageKey(m: ObsMessage): string {
  if (m.schema === 'shadow.observation/v1') return `o:${observationId(m)}`;
  if (m.schema === 'shadow.item_event/v1')
    return `e:${m.call_type}:${m.kind}:${m.item_hash}:${m.envelope_id}:${m.reason ?? ''}`;
  if (m.schema === 'shadow.judge_verdict/v1') return `j:${m.call_type}:${m.item_hash}:${m.arm_id}:${m.role}:${m.mode}`;
  return `x:${m.outcome_id}`;
}
