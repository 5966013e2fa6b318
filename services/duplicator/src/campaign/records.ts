// The item-level records of `shadow_dispatch` (claims, admission counters) and the verdict an
// item's processing gives its delivery.
import { z } from 'zod';

/** The item claim in `shadow_dispatch` under `<campaign>.<item_hash>` (first writer wins). */
export const ItemClaim = z
  .object({
    kind: z.literal('item'),
    state: z.enum(['claimed', 'reserved', 'finished', 'excluded']),
    envelope_id: z.string(),
    worker_id: z.string(),
    reason: z.string().nullable(),
    at: z.string(),
  })
  .strict();
export type ItemClaim = z.infer<typeof ItemClaim>;

/**
 * Items admitted per call type, `<campaign>._n.<call_type>`, incremented by CAS up to max_items.
 * `recent` holds the first 16 hex chars of the last {@link RECENT_ADMITTED} admitted items, so a
 * redelivery after a crash between counting and the claim update does not count an item twice
 * (the redelivery comes within ack_wait + lease TTL, long before 256 more items are admitted).
 */
export const Counter = z
  .object({ count: z.number().int().nonnegative(), recent: z.array(z.string()).optional() })
  .strict();
export const RECENT_ADMITTED = 256;

/** What becomes of a delivery: acknowledged, or redelivered after `delayMs` (nak). */
export type Verdict = { ack: true } | { ack: false; delayMs: number };
export const ACK: Verdict = { ack: true };
/** Redeliver after `delayMs` milliseconds. */
export const later = (delayMs: number): Verdict => ({ ack: false, delayMs });
