/**
 * Fold stage 1: partition a campaign's OBS messages and de-duplicate them, order-independently:
 * observations by (call type, item_hash, arm, role), keeping the earliest start; item events by
 * their full key; outcomes by outcome_id (only for items with observations); judge verdicts.
 */
import type { ItemEvent, ObsMessage, Observation, OutcomeRecord } from '@shadowplane/contracts';
import type { ScoreResult } from '@shadowplane/scoring';
import { collectJudgeVerdicts, judgeInputs } from './judge-fold.js';
import { byKey } from './fold-util.js';
import { observationId } from './fold-ids.js';

/** What stage 1 gives the later stages. */
export interface Partitioned {
  /** every observation of the campaign as received (with duplicates), with its lineage id */
  withIds: { o: Observation; id: string }[];
  /** observations received, duplicates included */
  obsRawCount: number;
  /** de-duplicated observations, sorted by call type, item_hash, arm, role */
  obs: { o: Observation; id: string }[];
  /** de-duplicated item events, sorted */
  evs: ItemEvent[];
  /** de-duplicated outcomes of items with observations, sorted by outcome_id */
  outcomes: OutcomeRecord[];
  verdicts: ReturnType<typeof collectJudgeVerdicts>;
  ji: ReturnType<typeof judgeInputs>;
  judgeScores: ReadonlyMap<string, ScoreResult> | undefined;
  judgeFamily: string | undefined;
  armFamilies: Readonly<Record<string, string>> | undefined;
  /** outcomes about an arm, keyed `<item_hash>|<arm_id>` */
  outcomesFor: Map<string, OutcomeRecord[]>;
}

/** Stage 1 (pure): partitions and de-duplicates `messages` of campaign `cid`. */
export function partitionMessages(
  cid: string,
  incumbentId: string,
  messages: readonly ObsMessage[],
  given: {
    judgeScores?: ReadonlyMap<string, ScoreResult>;
    judgeFamily?: string;
    armFamilies?: Readonly<Record<string, string>>;
  },
): Partitioned {
  const obsRaw: Observation[] = [];
  const events: ItemEvent[] = [];
  const outcomesRaw: OutcomeRecord[] = [];
  for (const m of messages) {
    if (m.schema === 'shadow.observation/v1' && m.campaign_id === cid) obsRaw.push(m);
    else if (m.schema === 'shadow.item_event/v1' && m.campaign_id === cid) events.push(m);
    else if (m.schema === 'shadow.outcome/v1' && (m.campaign_id === cid || m.campaign_id === null)) outcomesRaw.push(m);
  }
  const withIds = obsRaw.map((o) => ({ o, id: observationId(o) }));
  const obsByKey = new Map<string, { o: Observation; id: string }>();
  for (const x of byKey(withIds, (x) => `${x.o.started_at}|${x.o.envelope_id}|${x.id}`)) {
    const k = `${x.o.call_type}|${x.o.item_hash}|${x.o.arm_id}|${x.o.role}`;
    if (!obsByKey.has(k)) obsByKey.set(k, x);
  }
  const obs = byKey([...obsByKey.values()], (x) => `${x.o.call_type}|${x.o.item_hash}|${x.o.arm_id}|${x.o.role}`);
  const eventMap = new Map<string, ItemEvent>();
  for (const e of events) eventMap.set(`${e.call_type}|${e.kind}|${e.item_hash}|${e.envelope_id}|${e.reason ?? ''}`, e);
  const evs = byKey(
    [...eventMap.values()],
    (e) => `${e.call_type}|${e.item_hash}|${e.kind}|${e.envelope_id}|${e.reason ?? ''}`,
  );
  const envelopeItem = new Map<string, string>();
  for (const { o } of obs) envelopeItem.set(o.envelope_id, o.item_hash);
  const itemsWithObs = new Set(obs.map((x) => x.o.item_hash));
  const outcomeMap = new Map<string, OutcomeRecord>();
  for (const o of outcomesRaw) {
    const item = o.item_hash ?? (o.envelope_id ? envelopeItem.get(o.envelope_id) : undefined);
    if (item !== undefined && itemsWithObs.has(item)) outcomeMap.set(o.outcome_id, o);
  }
  const outcomes = byKey([...outcomeMap.values()], (o) => o.outcome_id);
  // judge verdicts published by the duplicator (judge-fold.ts); explicit judgeScores take precedence
  const verdicts = collectJudgeVerdicts(messages, cid).filter((v) => itemsWithObs.has(v.item_hash));
  const ji = judgeInputs(verdicts, incumbentId);
  const judgeScores = given.judgeScores ?? (verdicts.length > 0 ? ji.pointwise : undefined);
  const judgeFamily = given.judgeFamily ?? ji.judgeFamily;
  const armFamilies = given.armFamilies ?? ji.armFamilies;
  const agreementAll: [string, string][] = [];
  const outcomesFor = new Map<string, OutcomeRecord[]>();
  for (const o of outcomes) {
    if (o.arm_id === null) continue; // about the served production response: provenance, not an arm
    const item = o.item_hash ?? envelopeItem.get(o.envelope_id!)!;
    const k = `${item}|${o.arm_id}`;
    const list = outcomesFor.get(k);
    if (list) list.push(o);
    else outcomesFor.set(k, [o]);
  }
  return {
    withIds,
    obsRawCount: obsRaw.length,
    obs,
    evs,
    outcomes,
    verdicts,
    ji,
    judgeScores,
    judgeFamily,
    armFamilies,
    outcomesFor,
  };
}
