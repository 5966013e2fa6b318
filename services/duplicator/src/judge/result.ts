// What one judge call gave, and how a provider reply becomes it (reply parsing, failure reasons).
import { parsePairwiseReply, parsePointwiseReply } from '@shadowplane/scoring';
import type { AttemptOutcome } from '../invoke.js';
import { JUDGE_LOST_IN_FLIGHT } from '../judge-record.js';

/** What one judge call gave: a value 0–1, or null with the reason (never both). */
export interface CallResult {
  value: number | null;
  /** why `value` is null (null when it is not) */
  reason: string | null;
  /** an HTTP call was made (or may have been: lost in flight) */
  called: boolean;
  chargedMicroUsd: number;
  raw: string | null;
}

/** A live worker holds this judge call in flight: the item is looked at again later. */
export const DEFER = Symbol('defer');

/** A judge call not made, for `reason` (nothing charged). */
export const notCalled = (reason: string): CallResult => ({
  value: null,
  reason,
  called: false,
  chargedMicroUsd: 0,
  raw: null,
});

/** A judge call lost in flight: null `judge_lost_in_flight`, charged `chargedMicroUsd` µUSD. */
export const lostResult = (chargedMicroUsd: number): CallResult => ({
  value: null,
  reason: JUDGE_LOST_IN_FLIGHT,
  called: true,
  chargedMicroUsd,
  raw: null,
});

/**
 * True when the call was not made because its reservation id was already settled: another
 * processing of the same item (a redelivery that overlapped the first, under load) made that
 * call, and its verdict — with the real reply — is the one to publish. Publishing this one would
 * record a null order for a call that was in fact made (and, by message-id de-duplication, could
 * win over the real verdict).
 */
export function judgedElsewhere(r: CallResult): boolean {
  return r.reason === 'judge_not_reserved:already_settled';
}

/** Null reason of a failed judge call from its error class. */
function failureReason(errorClass: string): string {
  return errorClass === 'hang_timeout' ? 'judge_timeout' : `judge_error:${errorClass}`;
}

/**
 * The result of a judge call that was made: a failed call gets its failure reason, a reply is
 * parsed as a pairwise or pointwise judgement (scoring's parsers). `charged` is the µUSD the call
 * is settled at.
 */
export function replyResult(out: AttemptOutcome, charged: number, pairwise: boolean): CallResult {
  if (out.errorClass !== null) {
    return {
      value: null,
      reason: failureReason(out.errorClass),
      called: true,
      chargedMicroUsd: charged,
      raw: out.rawText,
    };
  }
  const text = out.parsed?.outputText ?? '';
  const reply = pairwise ? parsePairwiseReply(text) : parsePointwiseReply(text);
  return {
    value: reply.value,
    reason: reply.value === null ? reply.reason : null,
    called: true,
    chargedMicroUsd: charged,
    raw: out.rawText,
  };
}
