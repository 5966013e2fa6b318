// The `shadow.judge_verdict/v1` of one judged arm, with its raw replies kept as an encrypted artifact.
import type { Envelope, JudgeVerdict } from '@shadowplane/contracts';
import { putArtifact } from '@shadowplane/artifacts';
import { judgeTemplateHash, judgeTemplateId } from '@shadowplane/scoring';
import type { JudgeSetup, JudgedArm } from './context.js';

/** One arm's judgement before it is published: its score (or null reason), orders, calls and charge. */
export interface VerdictDraft {
  score: number | null;
  null_reason: string | null;
  orders: JudgeVerdict['orders'];
  position_flip: boolean | null;
  calls: number;
  /** µUSD charged for the calls */
  charged: number;
  /** the calls' raw replies (null: none kept) */
  raws: (string | null)[];
}

/**
 * Publishes the verdict on `arm` (pairwise: `against` the incumbent's arm id; pointwise: null) on
 * the campaign's OBS subject, de-duplicated per item, arm and mode. When any call was made, the
 * judgement and raw replies are stored as an encrypted artifact under the campaign's retention
 * first. A null score gets its reason (default `judge_unparsable`), never 0.
 */
export async function publishVerdict(
  d: JudgeSetup,
  env: Envelope,
  arm: JudgedArm,
  against: string | null,
  families: string[],
  v: VerdictDraft,
): Promise<void> {
  const spec = d.spec;
  const tid = judgeTemplateId(spec.mode, spec.template_version);
  let artifactRef: string | null = null;
  if (v.calls > 0) {
    artifactRef = await putArtifact(
      { bus: d.ctx.bus, bucket: d.ctx.bus.names.buckets.artifacts },
      d.ctx.keyring,
      {
        output_text: JSON.stringify({ score: v.score, null_reason: v.null_reason, orders: v.orders }),
        tool_calls: [],
        response_raw: JSON.stringify(v.raws),
      },
      {
        campaign_id: d.campaign.id,
        arm_id: `judge.${arm.armId}`,
        item_hash: env.item_hash,
        purpose: d.campaign.spec.retention.purpose,
        ttl_days: d.campaign.spec.retention.ttl_days,
      },
    );
  }
  const msg: JudgeVerdict = {
    schema: 'shadow.judge_verdict/v1',
    campaign_id: d.campaign.id,
    item_hash: env.item_hash,
    call_type: env.call_type,
    envelope_id: env.envelope_id,
    mode: spec.mode,
    arm_id: arm.armId,
    role: arm.role,
    against_arm_id: against,
    judge_provider: spec.provider,
    judge_model: spec.model,
    judge_family: d.family,
    arm_families: families,
    template_id: tid,
    template_hash: judgeTemplateHash(tid),
    score: v.score,
    null_reason: v.score === null ? (v.null_reason ?? 'judge_unparsable') : null,
    orders: v.orders,
    position_flip: v.position_flip,
    calls: v.calls,
    charged_micro_usd: v.charged,
    cost_usd: v.charged / 1e6,
    artifact_ref: artifactRef,
  };
  await d.ctx.bus.js.publish(d.ctx.bus.names.obsSubject(d.campaign.id), JSON.stringify(msg), {
    msgID: `${d.campaign.id}.${env.item_hash}.judge.${arm.armId}.${spec.mode}`,
  });
  d.ctx.metrics?.judge.verdict(spec.mode, msg.score, msg.null_reason);
}
