import { z } from 'zod';

/**
 * One judge call's state in `shadow_dispatch`, under {@link judgeCallKey}. The judge's
 * counterpart of an arm's `DispatchState`: it is what lets a redelivered item (its worker died
 * between the arm calls and the verdict, or during a judge call) end with a verdict without a
 * second charge for a call that may already have been paid for.
 *
 * Order of writes for one call: reserve `<item>.judge.<arm>.<order>` on the ledger → create
 * `invoking` (first writer wins) → call → `done` (compare-and-set on the revision) → settle at
 * the recorded charge. So a record that is `invoking` always has its reservation on the ledger
 * (or settled by the processing that recorded it lost), and a settled call always has a record.
 * - `invoking` by a dead worker: the call may have been sent; it becomes `lost`, charged its
 *   reserved bound (what was reserved for it is what it may have spent), and its order's value
 *   is null with reason `judge_lost_in_flight` — never re-called, never 0;
 * - `invoking` by a live worker: that worker is still judging; the item is looked at later;
 * - `done`: the recorded value (or null reason) and charge are reused as they are; its
 *   settlement is repeated (idempotent) in case a crash came between the record and the ledger.
 * The judge's rationale and raw reply are not kept here (the raw reply goes to the encrypted
 * artifact of the verdict published by the processing that made the call).
 */
export const JudgeCallRecord = z
  .object({
    kind: z.literal('judge_call'),
    state: z.enum(['invoking', 'done', 'lost']),
    worker_id: z.string(),
    /** micro-USD reserved for the call (its upper bound) */
    reserved_micro_usd: z.number().int().nonnegative(),
    /** `done`/`lost`: micro-USD the ledger is settled at for this call */
    charged_micro_usd: z.number().int().nonnegative().optional(),
    /** `done`: whether an HTTP call was made (false: the paid_dispatch gate closed first) */
    called: z.boolean().optional(),
    /** `done`: the parsed judgement (0–1), or null with `reason` */
    value: z.number().min(0).max(1).nullable().optional(),
    /** `done`/`lost`: why `value` is null (null when it is not) */
    reason: z.string().nullable().optional(),
    at: z.iso.datetime({ offset: true }),
  })
  .strict();
export type JudgeCallRecord = z.infer<typeof JudgeCallRecord>;

/**
 * `<campaign>.<item_hash>.judge.<arm>.<order>`: the key of one judge call's record in
 * `shadow_dispatch` (five tokens, so it never reads as an item claim `<campaign>.<item>` or an arm
 * record `<campaign>.<item>.<arm>`). `order` is `single`, `ab` or `ba`.
 */
export const judgeCallKey = (campaignId: string, itemHash: string, armId: string, order: string): string =>
  `${campaignId}.${itemHash}.judge.${armId}.${order}`;

/** Null reason of a judge call whose worker died while it was in flight (charged its reserved bound). */
export const JUDGE_LOST_IN_FLIGHT = 'judge_lost_in_flight';
