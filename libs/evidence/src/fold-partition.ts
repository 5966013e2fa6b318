/**
 * Fold stage 1: partition a campaign's OBS messages and de-duplicate them, order-independently:
 * observations by (call type, item_hash, arm, role), keeping the earliest start; item events by
 * their full key; outcomes by outcome_id (only for items with observations); judge verdicts.
 * Observations are read from an {@link ObsTable} (columns, not message objects); the ones among
 * the messages are added to it first.
 */
import type { ItemEvent, ObsMessage, OutcomeRecord } from '@shadowplane/contracts';
import type { ScoreResult } from '@shadowplane/scoring';
import { collectJudgeVerdicts, judgeInputs } from './judge-fold.js';
import { byKey, cmpJoined } from './fold-util.js';
import { ObsTable } from './obs-table.js';

/** What stage 1 gives the later stages. */
export interface Partitioned {
  /** the table holding the campaign's observations */
  table: ObsTable;
  /** rows of every observation of the campaign as received (with duplicates) */
  rawRows: Int32Array;
  /**
   * table rows of the de-duplicated observations, sorted by call type, item_hash, arm, role (rows,
   * not objects: 300k `{ o, id, row }` entries were ~35 MB live through the whole fold)
   */
  obs: Int32Array;
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

/**
 * Stage 1 (pure but for `table`, which the observations among `messages` are added to): partitions
 * and de-duplicates the messages and table rows of campaign `cid`.
 */
export function partitionMessages(
  cid: string,
  incumbentId: string,
  messages: readonly ObsMessage[],
  given: {
    table?: ObsTable | undefined;
    judgeScores?: ReadonlyMap<string, ScoreResult>;
    judgeFamily?: string;
    armFamilies?: Readonly<Record<string, string>>;
  },
): Partitioned {
  const table = given.table ?? new ObsTable();
  const events: ItemEvent[] = [];
  const outcomesRaw: OutcomeRecord[] = [];
  for (const m of messages) {
    if (m.schema === 'shadow.observation/v1') table.add(m);
    else if (m.schema === 'shadow.item_event/v1' && m.campaign_id === cid) events.push(m);
    else if (m.schema === 'shadow.outcome/v1' && (m.campaign_id === cid || m.campaign_id === null)) outcomesRaw.push(m);
  }
  // every row is added: spare capacity and the add-time lookups are dropped for the fold
  table.compact();
  const rawRows = table.rowsOf(cid);
  const obs = dedupObservations(table, rawRows);
  const eventMap = new Map<string, ItemEvent>();
  for (const e of events) eventMap.set(`${e.call_type}|${e.kind}|${e.item_hash}|${e.envelope_id}|${e.reason ?? ''}`, e);
  const evs = byKey(
    [...eventMap.values()],
    (e) => `${e.call_type}|${e.item_hash}|${e.kind}|${e.envelope_id}|${e.reason ?? ''}`,
  );
  // only outcomes and verdicts need these: a fold without them does not build them
  const need = outcomesRaw.length > 0 || messages.some((m) => m.schema === 'shadow.judge_verdict/v1');
  const envelopeItem = new Map<string, string>();
  const itemsWithObs = new Set<string>();
  if (need)
    for (const r of obs) {
      const o = table.row(r);
      envelopeItem.set(o.envelope_id, o.item_hash);
      itemsWithObs.add(o.item_hash);
    }
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
    table,
    rawRows,
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

/**
 * The observations of `rows` de-duplicated by (call type, item_hash, arm, role), keeping the
 * first by (started_at, envelope_id, id), sorted by the key. Orders compare the keys as the
 * `|`-joined strings would (code-unit order) without building them: 300k keys of ~150
 * characters were ~50 MB at once.
 */
function dedupObservations(t: ObsTable, rows: Int32Array): Int32Array {
  const s = t.s;
  const p = t.pool as string[];
  const key = (r: number) => [p[s.call_type[r]!]!, p[s.item_hash[r]!]!, p[s.arm_id[r]!]!, p[s.role[r]!]!];
  // same pool ids: same strings (the common case of two arms of one item differs in arm_id only)
  const keyCmp = (a: number, b: number) =>
    s.call_type[a] === s.call_type[b] &&
    s.item_hash[a] === s.item_hash[b] &&
    s.arm_id[a] === s.arm_id[b] &&
    s.role[a] === s.role[b]
      ? 0
      : cmpJoined(key(a), key(b));
  // start times held as ms are 24-character ISO texts: equal length, so a difference in them
  // decides the joined comparison exactly as the numbers do
  const tm = t.tm.started_at;
  const firstCmp = (a: number, b: number) => {
    const x = tm[a]!;
    const y = tm[b]!;
    if (!Number.isNaN(x) && !Number.isNaN(y)) {
      if (x !== y) return x < y ? -1 : 1;
      return cmpJoined([p[s.envelope_id[a]!]!, t.id(a)], [p[s.envelope_id[b]!]!, t.id(b)]);
    }
    return cmpJoined(
      [t.time('started_at', a), p[s.envelope_id[a]!]!, t.id(a)],
      [t.time('started_at', b), p[s.envelope_id[b]!]!, t.id(b)],
    );
  };
  const sorted = Array.from(rows).sort((a, b) => keyCmp(a, b) || firstCmp(a, b));
  const out = new Int32Array(sorted.length);
  let n = 0;
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]!;
    if (i > 0 && keyCmp(sorted[i - 1]!, r) === 0) continue;
    out[n++] = r;
  }
  return out.slice(0, n);
}
