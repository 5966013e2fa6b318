/**
 * Compare mode (docs/bench.md): a compare run calls only its candidate; each item it observed is
 * paired, by call type and item_hash, with the baseline run's retained observation of the
 * baseline arm. This module turns the two runs' OBS messages into the one message set the fold
 * reads: the baseline observations relabelled as this campaign's incumbent, and an `excluded`
 * item event (with its reason) for every item whose baseline half is missing. Pure; no I/O.
 */
import {
  BASELINE_ARTIFACT_MISSING,
  NOT_IN_BASELINE,
  type CampaignSpec,
  type ItemEvent,
  type ObsMessage,
  type Observation,
} from '@shadowplane/contracts';
import { observationId } from './fold.js';

/** Input of {@link compareModeMessages}. */
export interface CompareModeInput {
  campaignId: string;
  /** the compare run's pinned spec; `compare.resolved` must be set */
  spec: CampaignSpec;
  /** the compare run's own OBS messages */
  own: readonly ObsMessage[];
  /** the baseline run's OBS messages (observations with `output_text` filled where the artifact was read) */
  baseline: readonly ObsMessage[];
  /**
   * True when an observation's retained artifact is known to be gone (missing or expired). The
   * default: an ok observation with an artifact reference whose `output_text` is null or absent.
   */
  artifactMissing?: (o: Observation) => boolean;
}

/** Output of {@link compareModeMessages}: the messages to fold and what pairing found, per reason. */
export interface CompareModeResult {
  messages: ObsMessage[];
  /** items whose baseline observation joins the fold (whatever its status) */
  paired: number;
  /** items made ineligible, by reason (`baseline_artifact_missing`, `not_in_baseline`) */
  ineligible: Record<string, number>;
}

const defaultMissing = (o: Observation): boolean =>
  o.status === 'ok' && o.artifact_ref !== null && (o.output_text === null || o.output_text === undefined);

/**
 * Builds the fold input of a compare run. Rules:
 * - the run's own incumbent-role observations are dropped (compare mode never calls the incumbent);
 * - for each (call type, item_hash) the run observed, the baseline arm's observation of the same
 *   item (smallest observation id when there are several) joins as role `incumbent` with the
 *   spec's incumbent arm id and instrument `judged_dataset_run` — the baseline output is a retained
 *   artifact re-scored, not a call made beside the candidate, so the state is capped at ON_FRONTIER;
 * - an item whose baseline observation's artifact is missing gets `excluded{baseline_artifact_missing}`
 *   (the fold then widens the quality interval to the worst case for it); an item the baseline never
 *   observed gets `excluded{not_in_baseline}`.
 * Errors: throws Error when `spec.compare.resolved` is absent.
 */
export function compareModeMessages(input: CompareModeInput): CompareModeResult {
  const resolved = input.spec.compare?.resolved;
  if (!resolved) throw new Error('compareModeMessages: the spec has no resolved compare baseline');
  const missing = input.artifactMissing ?? defaultMissing;
  const out: ObsMessage[] = [];
  const items = new Map<string, Observation>(); // ct|h → first own observation (for the event's ids)
  for (const m of input.own) {
    if (m.schema === 'shadow.observation/v1') {
      if (m.role !== 'candidate') continue;
      const k = `${m.call_type}|${m.item_hash}`;
      const had = items.get(k);
      if (!had || m.envelope_id < had.envelope_id) items.set(k, m);
    }
    out.push(m);
  }
  const base = new Map<string, { o: Observation; id: string }>();
  for (const m of input.baseline) {
    if (m.schema !== 'shadow.observation/v1' || m.arm_id !== resolved.arm_id || m.role === 'incumbent_aa') continue;
    const k = `${m.call_type}|${m.item_hash}`;
    if (!items.has(k)) continue;
    const id = observationId(m);
    const had = base.get(k);
    if (!had || id < had.id) base.set(k, { o: m, id });
  }
  const ineligible: Record<string, number> = {};
  let paired = 0;
  const event = (own: Observation, reason: string): ItemEvent => ({
    schema: 'shadow.item_event/v1',
    campaign_id: input.campaignId,
    item_hash: own.item_hash,
    call_type: own.call_type,
    envelope_id: own.envelope_id,
    kind: 'excluded',
    reason,
    at: own.started_at,
  });
  for (const k of [...items.keys()].sort()) {
    const own = items.get(k)!;
    const b = base.get(k);
    if (!b) {
      out.push(event(own, NOT_IN_BASELINE));
      ineligible[NOT_IN_BASELINE] = (ineligible[NOT_IN_BASELINE] ?? 0) + 1;
      continue;
    }
    if (missing(b.o)) {
      out.push(event(own, BASELINE_ARTIFACT_MISSING));
      ineligible[BASELINE_ARTIFACT_MISSING] = (ineligible[BASELINE_ARTIFACT_MISSING] ?? 0) + 1;
      continue;
    }
    paired++;
    out.push({
      ...b.o,
      campaign_id: input.campaignId,
      arm_id: input.spec.incumbent.id,
      role: 'incumbent',
      instrument: 'judged_dataset_run',
    });
  }
  return { messages: out, paired, ineligible };
}
