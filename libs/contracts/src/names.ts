/**
 * Every NATS stream, subject, KV bucket and object-store name Shadowplane uses. Nothing else in
 * the code base spells these strings. `prefix` isolates deployments (and tests) sharing one NATS:
 * with prefix `t1`, stream CAPTURE becomes `t1_CAPTURE`, bucket shadow_budget becomes
 * `t1_shadow_budget` and subjects gain a leading `t1.` token.
 */
export interface NatsNames {
  readonly prefix: string;
  readonly streams: { readonly capture: string; readonly obs: string };
  readonly buckets: {
    readonly campaigns: string;
    readonly budget: string;
    readonly dispatch: string;
    readonly artifacts: string;
    readonly reports: string;
    readonly flags: string;
    /** suite index: `<suite>.<call_type>` → the latest frozen dataset (SuiteFreezeRecord) */
    readonly suites: string;
  };
  /** Object store of frozen datasets (`shadow.dataset/v1` documents), by dataset hash. */
  readonly datasets: string;
  /** Object store for request bodies too large for one NATS message. */
  readonly captureBodies: string;
  /** Object store for report documents (report JSON, HTML, evidence bundle), which may exceed one NATS message; indexed from the reports KV. */
  readonly reportDocs: string;
  /** Request/reply subject of the verdict service: `shadow.verdict.report` (body `{campaign_id}` → `{report_id}`). */
  readonly verdictReportSubject: string;
  /** `shadow.capture.<suite>.<call_type>` */
  captureSubject(suite: string, callType: string): string;
  /** `shadow.capture.<suite>.<call_type>.skipped`: the sidecar's skip markers (no campaign filter matches it) */
  captureSkipSubject(suite: string, callType: string): string;
  /** Everything captured for one suite, skip markers included: `shadow.capture.<suite>.>` */
  captureSuiteAll(suite: string): string;
  /** Wildcard over all captures: `shadow.capture.>` */
  readonly captureAll: string;
  /** Filter for one suite and optionally one call type: `shadow.capture.<suite>.<call_type|*>` */
  captureFilter(suite: string, callType?: string): string;
  /** `shadow.obs.<campaign>` */
  obsSubject(campaignId: string): string;
  /** `shadow.obs.>` */
  readonly obsAll: string;
}

const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/** True when `s` is safe as one NATS subject token and KV key part: 1–64 of [A-Za-z0-9_-]. */
export function isSubjectToken(s: string): boolean {
  return TOKEN.test(s);
}

function token(kind: string, s: string): string {
  if (!TOKEN.test(s)) throw new TypeError(`${kind} must match ${TOKEN.source}: ${JSON.stringify(s)}`);
  return s;
}

/**
 * Builds the name set for a deployment.
 * @param prefix optional isolation prefix ([A-Za-z0-9_-], ≤ 32 chars); '' for the standard names
 * @throws TypeError when the prefix or a subject token is not a safe token
 * Source: docs/architecture.md "State".
 */
export function natsNames(prefix = ''): NatsNames {
  if (prefix !== '' && !/^[A-Za-z0-9_-]{1,32}$/.test(prefix))
    throw new TypeError(`bad NATS prefix ${JSON.stringify(prefix)}`);
  const s = (n: string) => (prefix ? `${prefix}_${n}` : n);
  const subj = (n: string) => (prefix ? `${prefix}.${n}` : n);
  return Object.freeze({
    prefix,
    streams: Object.freeze({ capture: s('CAPTURE'), obs: s('OBS') }),
    buckets: Object.freeze({
      campaigns: s('shadow_campaigns'),
      budget: s('shadow_budget'),
      dispatch: s('shadow_dispatch'),
      artifacts: s('shadow_artifacts'),
      reports: s('shadow_reports'),
      flags: s('shadow_flags'),
      suites: s('shadow_suites'),
    }),
    datasets: s('shadow_datasets'),
    captureBodies: s('shadow_capture_bodies'),
    reportDocs: s('shadow_report_docs'),
    verdictReportSubject: subj('shadow.verdict.report'),
    captureSubject: (suite: string, callType: string) =>
      subj(`shadow.capture.${token('suite', suite)}.${token('call_type', callType)}`),
    captureSkipSubject: (suite: string, callType: string) =>
      subj(`shadow.capture.${token('suite', suite)}.${token('call_type', callType)}.skipped`),
    captureSuiteAll: (suite: string) => subj(`shadow.capture.${token('suite', suite)}.>`),
    captureAll: subj('shadow.capture.>'),
    captureFilter: (suite: string, callType?: string) =>
      subj(`shadow.capture.${token('suite', suite)}.${callType === undefined ? '*' : token('call_type', callType)}`),
    obsSubject: (campaignId: string) => subj(`shadow.obs.${token('campaign_id', campaignId)}`),
    obsAll: subj('shadow.obs.>'),
  });
}

/** Pseudo campaign id for outcomes that name no campaign (`shadow.obs._outcomes`). */
export const OUTCOMES_NO_CAMPAIGN = '_outcomes';

/** KV key of the `paid_dispatch` kill switch in the flags bucket. Unknown = off. */
export const FLAG_PAID_DISPATCH = 'paid_dispatch';
